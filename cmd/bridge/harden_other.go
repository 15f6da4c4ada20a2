//go:build !linux

package main

// hardenProcess does nothing outside Linux.
func hardenProcess() error { return nil }

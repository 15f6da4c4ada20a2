//go:build !linux

package harden

// Process does nothing outside Linux.
func Process() error { return nil }

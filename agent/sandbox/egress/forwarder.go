package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
)

// ForwarderCommand is the hidden first argument that makes the bridge
// binary run as a sandbox's forwarder (see MaybeForward):
//
//	bridge __egress-forward SOCKET -- PROGRAM ARGS...
//
// It listens on 127.0.0.1:ForwarderPort inside the sandbox's network
// namespace, relays every connection to the Unix socket SOCKET (the
// agent's gate), and runs PROGRAM (the CLI) as its child with the same
// stdin, stdout, stderr and environment, passing signals on; it exits with
// the child's status. It runs as the agent, inside the sandbox, and can
// reach nothing the agent could not: the socket is in the agent's view.
const ForwarderCommand = "__egress-forward"

// ForwarderPort is where the forwarder listens inside a sandbox: the
// agent's HTTP(S)_PROXY is http://127.0.0.1:ForwarderPort.
const ForwarderPort = 3128

// ProxyURL is the proxy URL the agent is given (ForwarderPort on
// 127.0.0.1).
const ProxyURL = "http://127.0.0.1:3128"

// forwarderMaxConns caps the forwarder's relayed connections (the gate has
// its own, lower cap; this one only bounds the forwarder's memory).
const forwarderMaxConns = 256

// ForwarderArgs returns the command line that runs argv behind the
// forwarder; exe is the bridge binary.
func ForwarderArgs(exe, socket string, argv []string) []string {
	return append([]string{exe, ForwarderCommand, socket, "--"}, argv...)
}

// MaybeForward runs the forwarder and exits when the process was started
// as one (os.Args[1] == ForwarderCommand); otherwise it returns at once.
// Call it first in main, and in TestMain of tests whose binary serves as
// a forwarder.
func MaybeForward() {
	if len(os.Args) > 1 && os.Args[1] == ForwarderCommand {
		os.Exit(RunForwarder(os.Args[2:], os.Stderr))
	}
}

// RunForwarder is the forwarder (see ForwarderCommand); args are what
// follows ForwarderCommand. It returns the exit code: the child's, 128+n
// when a signal n ended it, 125 when the forwarder itself failed.
func RunForwarder(args []string, stderr io.Writer) int {
	runtime.GOMAXPROCS(1)
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintf(stderr, "%s: usage: %s SOCKET -- PROGRAM [ARGS...]\n", ForwarderCommand, ForwarderCommand)
		return 125
	}
	socket, argv := args[0], args[2:]
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ForwarderPort))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ForwarderCommand, err)
		return 125
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); forward(ln, socket) }()
	code := runChild(argv, stderr)
	ln.Close()
	wg.Wait()
	return code
}

// forward relays every connection accepted on ln to the Unix socket,
// until ln is closed. Relays in progress end with the process.
func forward(ln net.Listener, socket string) {
	slots := make(chan struct{}, forwarderMaxConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			c.Close()
			continue
		}
		go func() {
			defer func() { <-slots }()
			up, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				return
			}
			relay(c, up)
		}()
	}
}

// runChild runs argv with the forwarder's stdio and environment, passing
// SIGTERM, SIGINT, SIGHUP and SIGQUIT on, and returns its exit code.
func runChild(argv []string, stderr io.Writer) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = childProcAttr()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ForwarderCommand, err)
		return 125
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-waited:
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				fmt.Fprintf(stderr, "%s: %v\n", ForwarderCommand, err)
				return 125
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return cmd.ProcessState.ExitCode()
		}
	}
}

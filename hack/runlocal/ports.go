package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// listener is an address run-local opens at a fixed port, chosen by one of its flags.
// kube-apiserver and etcd (client and peer) are not among them: envtest gives them ports it
// finds free as it starts them; KWOK serves nothing (no --server-address).
type listener struct {
	// Address is host:port; "" or "0" opens nothing.
	Address string
	// What needs the port, as a user knows it: "the scheduler's Prometheus /metrics".
	What string
	// Flag is run-local's flag that chooses the address: "--metrics-address".
	Flag string
}

func (l listener) off() bool { return off(l.Address) }

// off tells whether an address flag opens nothing.
func off(address string) bool { return address == "" || address == "0" }

// reservePorts listens on every listener's address before anything starts, so that a port in
// use stops run-local at once, with every busy port named at once (its number, what needs it
// and the flag that moves it), instead of once the cluster is up. Its caller holds the ports
// until it starts what needs them, so that nothing takes them meanwhile: release closes them.
func reservePorts(listeners []listener) (release func(), err error) {
	var held []net.Listener
	release = func() {
		for _, l := range held {
			_ = l.Close()
		}
	}
	var problems []string
	for i, l := range listeners {
		if l.off() {
			continue
		}
		host, port, err := net.SplitHostPort(l.Address)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q: %v; give HOST:PORT, such as 127.0.0.1:18080, or 0 for none", l.Flag, l.Address, err))
			continue
		}
		ln, err := net.Listen("tcp", l.Address)
		if err == nil {
			held = append(held, ln)
			continue
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			problems = append(problems, fmt.Sprintf("port %s (%s), for %s: %v; choose another address with %s, or %s=0 for none",
				port, l.Address, l.What, err, l.Flag, l.Flag))
			continue
		}
		if other, twice := samePort(listeners[:i], port); twice {
			problems = append(problems, fmt.Sprintf("port %s is asked for twice: by %s (%s) and by %s (%s); give one of them another port",
				port, other.Flag, other.What, l.Flag, l.What))
			continue
		}
		problem := fmt.Sprintf("port %s is busy (another process listens on %s): %s needs it. Stop that process, or choose another port with %s",
			port, l.Address, l.What, l.Flag)
		if free := freePortAfter(host, port); free != "" {
			problem += fmt.Sprintf(`, such as make run-local RUN_LOCAL_ARGS="%s=%s" (free now)`, l.Flag, free)
		}
		problems = append(problems, problem+fmt.Sprintf(", or %s=0 to do without %s", l.Flag, l.What))
	}
	if len(problems) > 0 {
		release()
		return func() {}, fmt.Errorf("nothing was started, a port it needs is not available:\n  %s", strings.Join(problems, "\n  "))
	}
	return release, nil
}

// checkPorts is run-local --check-ports: the check runDemo makes first, made alone, with every
// port given back at once.
func checkPorts(listeners []listener) error {
	release, err := reservePorts(listeners)
	release()
	return err
}

// samePort returns the listener among earlier that asks for port.
func samePort(earlier []listener, port string) (listener, bool) {
	for _, l := range earlier {
		if _, p, err := net.SplitHostPort(l.Address); err == nil && !l.off() && p == port {
			return l, true
		}
	}
	return listener{}, false
}

// freePortAfter returns host:port of the first of the next hundred ports that nothing listens
// on now, or "".
func freePortAfter(host, port string) string {
	n, err := strconv.Atoi(port)
	if err != nil {
		return ""
	}
	for p := n + 1; p <= min(n+100, 65535); p++ {
		address := net.JoinHostPort(host, strconv.Itoa(p))
		if ln, err := net.Listen("tcp", address); err == nil {
			_ = ln.Close()
			return address
		}
	}
	return ""
}

package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// KWOK is a running kwok (sigs.k8s.io/kwok, built by `make tools` into ./bin) playing every
// node of an Environment as kubelets would: nodes are initialised Ready and keep their
// leases, bound pods start Running with a start time, and deleted pods go at once.
type KWOK struct {
	cmd *exec.Cmd
	// exited is closed once the process has ended; exit is then how it ended.
	exited chan struct{}
	exit   error
	// stopping is set by Stop, so that its own ending is not taken for a death.
	stopping atomic.Bool
	// Log is the file kwok writes its output to.
	Log string
}

// KWOKBinary is the kwok to run ($KWOK, else ./bin/kwok) and the Stages it plays
// ($KWOK_STAGES, else ./bin/kwok-stages.yaml, written beside it by `make tools`).
func KWOKBinary() (binary, stages string, err error) {
	binary, stages = os.Getenv("KWOK"), os.Getenv("KWOK_STAGES")
	if binary == "" {
		binary = filepath.Join(RepoRoot(), "bin", "kwok")
	}
	if stages == "" {
		stages = filepath.Join(filepath.Dir(binary), "kwok-stages.yaml")
	}
	for _, path := range []string{binary, stages} {
		if _, err := os.Stat(path); err != nil {
			return "", "", fmt.Errorf("kwok not found (%w): run `make tools` (make test does it for you)", err)
		}
	}
	return binary, stages, nil
}

// kwokOptions let the one kwok process play every node as its own kubelet would: by default
// it moves 4 pods at a time through their stages, for the whole cluster, which at hundreds of
// nodes makes it, not the scheduler, what a scale test measures (a reclaim waits on it to
// remove each victim). Each node has a kubelet of its own; 64 at a time comes closer.
const kwokOptions = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 64
  nodePlayStageParallelism: 16
  nodeLeaseParallelism: 16
`

// StartKWOK starts kwok against the environment, writing its kubeconfig and log into dir.
func (e *Environment) StartKWOK(dir string) (*KWOK, error) {
	binary, stages, err := KWOKBinary()
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kwok.kubeconfig")
	if err := e.WriteKubeconfig(kubeconfig); err != nil {
		return nil, fmt.Errorf("kubeconfig for kwok: %w", err)
	}
	options := filepath.Join(dir, "kwok-options.yaml")
	if err := os.WriteFile(options, []byte(kwokOptions), 0o600); err != nil {
		return nil, err
	}
	k := &KWOK{Log: filepath.Join(dir, "kwok.log"), exited: make(chan struct{})}
	log, err := os.Create(k.Log)
	if err != nil {
		return nil, err
	}
	k.cmd = exec.Command(binary, "--kubeconfig", kubeconfig, "--config", stages, "--config", options,
		"--manage-all-nodes=true",
		// Every pod gets an IP from this range: the default /24 runs out after 254 pods.
		"--cidr", "10.0.0.0/8",
		"--node-lease-duration-seconds", "40")
	k.cmd.Stdout, k.cmd.Stderr = log, log
	// In a process group of its own, as envtest starts etcd and kube-apiserver: Ctrl-C in a
	// terminal reaches only the program that started it, which stops it with Stop, instead
	// of killing it under a program that would take that for a death (Err).
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := k.cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	go func() {
		k.exit = k.cmd.Wait()
		_ = log.Close()
		close(k.exited)
	}()
	return k, nil
}

// Err is nil while kwok runs. Once it has exited without Stop — a bad flag, a crash — no
// node is Ready any more and no pod starts or goes: Err then says so, with the end of its
// log, so that a suite fails with the cause rather than a timeout.
func (k *KWOK) Err() error {
	select {
	case <-k.exited:
	default:
		return nil
	}
	if k.stopping.Load() {
		return nil
	}
	return fmt.Errorf("kwok, which plays the nodes, exited (%w); the end of its log %s:\n%s", k.exit, k.Log, lastLines(k.Log, 20))
}

// Stop ends kwok (SIGTERM, then SIGKILL after five seconds) and waits until it has. It
// returns Err when kwok had already exited by itself.
func (k *KWOK) Stop() error {
	if err := k.Err(); err != nil {
		return err
	}
	k.stopping.Store(true)
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.exited:
		return nil
	case <-time.After(5 * time.Second): // wall time: a child process is given its grace in real seconds
		_ = k.cmd.Process.Kill()
		<-k.exited
		return errors.New("kwok did not stop on SIGTERM within 5s; killed")
	}
}

// lastLines returns the last n lines of a file, or why it could not be read.
func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

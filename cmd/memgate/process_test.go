package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// process is a memgate serve child. Its stderr is kept whole, and an exit the test
// did not ask for — a data race (exit 66), a crash, a non-zero exit on SIGTERM —
// fails the test with that stderr.
type process struct {
	cmd    *exec.Cmd
	base   string
	stderr syncBuffer
	exited chan struct{} // closed once the process has exited; err is then set
	err    error
	ended  bool // the test stopped or killed it
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// restartableAddr is a free loopback address for a memgate the test stops and starts
// again on the same address. Its port lies below Linux's ephemeral range (32768 up):
// a port from that range can become, while memgate is down, the local end of any
// outgoing connection on the machine, and the restart then fails with "address
// already in use" (seen in CI).
func restartableAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if l, err := net.Listen("tcp", addr); err == nil {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			return addr
		}
	}
	t.Fatal("no free port between 20000 and 32000")
	return ""
}

// startBinary runs memgate serve against the test database and returns once it is
// ready.
func startBinary(t testing.TB, env map[string]string, args ...string) (*process, string) {
	t.Helper()
	p := launch(t, env, args...)
	waitStatus(t, p.base+"/readyz", http.StatusOK, 60*time.Second)
	return p, p.base
}

// launch starts memgate serve (with args, e.g. --config) on a port it picks itself and
// returns once it listens (not yet ready). A process the test leaves running is stopped
// with SIGTERM when the test ends, and must exit 0.
func launch(t testing.TB, env map[string]string, args ...string) *process {
	t.Helper()
	// No deliverer unless the test asks for one: the database is shared with other
	// packages' tests, whose webhooks' deliveries are theirs to send.
	all := map[string]string{"MEMGATE_SERVER_ADDR": "127.0.0.1:0", "MEMGATE_NEO4J_URI": neo4jtest.URI(t),
		"MEMGATE_EMBEDDER_DIMENSIONS": fmt.Sprint(neo4jtest.Dimensions), "MEMGATE_WEBHOOKS_WORKERS": "0"}
	for k, v := range env {
		all[k] = v
	}
	p := &process{cmd: command(t, all, append([]string{"serve"}, args...)...), exited: make(chan struct{})}
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(pipe)
		scanner.Buffer(make([]byte, 64<<10), 1<<20)
		for scanner.Scan() {
			_, _ = p.stderr.Write(append(scanner.Bytes(), '\n'))
			var line struct{ Msg, Addr string }
			if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Msg == "memgate listening" {
				listening <- line.Addr
			}
		}
		p.err = p.cmd.Wait() // after the pipe is read to its end, as Wait requires
		close(p.exited)
	}()
	t.Cleanup(func() {
		if !p.ended {
			p.stop(t)
		}
	})
	select {
	case addr := <-listening:
		p.base = "http://" + addr
		return p
	case <-p.exited:
		t.Fatalf("memgate exited before it listened (%v):\n%s", p.err, p.stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("memgate did not listen within 2 minutes:\n%s", p.stderr.String())
	}
	return nil
}

// errorLines are the lines of the process's log at level ERROR so far.
func (p *process) errorLines() string {
	var out []string
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// stop sends SIGTERM and waits for the exit, which must be 0.
func (p *process) stop(t testing.TB) {
	t.Helper()
	p.ended = true
	if !p.alive(t) {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("memgate did not exit within a minute of SIGTERM:\n%s", p.stderr.String())
		return
	}
	if p.err != nil {
		t.Errorf("memgate exited with %v on SIGTERM, want 0:\n%s", p.err, p.stderr.String())
	}
}

// kill sends SIGKILL and waits for the process to die of it.
func (p *process) kill(t testing.TB) {
	t.Helper()
	p.ended = true
	if p.alive(t) {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// alive reports whether the process still runs, and fails the test when it has
// exited on its own (a race report halts it with exit 66).
func (p *process) alive(t testing.TB) bool {
	t.Helper()
	select {
	case <-p.exited:
		t.Errorf("memgate exited on its own with %v:\n%s", p.err, p.stderr.String())
		return false
	default:
		return true
	}
}

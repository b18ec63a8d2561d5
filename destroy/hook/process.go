package hook

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"time"
)

// process is a started hook: its command, its process group (whose id is
// the hook's pid) and the read ends of its stdout and stderr, which a
// goroutine each drains into stdout and stderr.
type process struct {
	cmd        *exec.Cmd
	pgid       int
	start      time.Time
	outR, errR *os.File
	stdout     *limitedBuffer
	stderr     *lineWriter
	copied     chan error // each drain's end
}

// start starts cmd with stdout and stderr on pipes of its own, read by a
// goroutine each (os/exec's would cost more system calls per hook); their
// read ends get a deadline once the hook has exited (wait). stdout keeps
// at most inv.MaxStdout bytes; stderr goes to inv.Stderr line by line.
func start(cmd *exec.Cmd, inv *Invocation) (*process, *HookError) {
	cannot := func(err error) *HookError { return &HookError{Reason: "cannot start: " + err.Error(), Err: err} }
	outR, outW, err := outputPipe()
	if err != nil {
		return nil, cannot(err)
	}
	errR, errW, err := outputPipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, cannot(err)
	}
	p := &process{cmd: cmd, outR: outR, errR: errR,
		stdout: &limitedBuffer{max: inv.MaxStdout}, stderr: &lineWriter{fn: inv.Stderr}}
	cmd.Stdout, cmd.Stderr = outW, errW
	p.start = time.Now()
	err = cmd.Start()
	// The hook has its own copies of the write ends now, and only its
	// processes may hold them: the pipes end when they have all exited.
	outW.Close()
	errW.Close()
	if err != nil {
		p.close()
		if errors.Is(err, fs.ErrPermission) {
			return nil, &HookError{Reason: "not executable: " + err.Error(), Err: err}
		}
		return nil, cannot(err)
	}
	p.pgid = cmd.Process.Pid
	p.copied = make(chan error, 2)
	go func() { p.copied <- drain(outR, p.stdout) }()
	go func() { p.copied <- drain(errR, p.stderr) }()
	return p, nil
}

// close closes the read ends of the hook's output.
func (p *process) close() {
	p.outR.Close()
	p.errR.Close()
}

// wait waits for the hook to exit and for its output to end. Processes
// the hook left behind may still hold its stdout or stderr: they get the
// grace period, counted from the exit, or from the SIGTERM when the hook
// was stopped (s); past it reading stops and the error is
// exec.ErrWaitDelay. When the hook was stopped, wait also waits for the
// rest of its process group, until s kills it. The error is cmd.Wait's,
// else reading's.
func (p *process) wait(s *stopper, grace time.Duration) error {
	waitErr := p.cmd.Wait()
	deadline := time.Now().Add(grace)
	if term, at := s.terminatedAt(); term {
		deadline = at.Add(grace)
	}
	stopReading(deadline, p.outR, p.errR)
	var copyErr error
	for range 2 {
		if err := <-p.copied; err != nil && copyErr == nil {
			copyErr = err
		}
	}
	switch {
	case waitErr != nil:
	case errors.Is(copyErr, os.ErrDeadlineExceeded) || errors.Is(copyErr, os.ErrClosed):
		waitErr = exec.ErrWaitDelay
	case copyErr != nil:
		waitErr = copyErr
	}
	if term, _ := s.terminatedAt(); term {
		// The hook is gone, but members of its group that ignore
		// SIGTERM may not be: they get until the grace period ends.
		for groupAlive(p.pgid) {
			select {
			case <-s.killedCh:
				return waitErr
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return waitErr
}

// stopper stops a hook when its run's context is done: its process group
// gets SIGTERM, and SIGKILL grace later unless the run has finished. It
// is a timer, no goroutine per hook.
type stopper struct {
	mu                 sync.Mutex
	finished           bool
	terminated, killed bool
	cancelled          time.Time // when SIGTERM was sent
	killTimer          *time.Timer
	killedCh           chan struct{} // closed once SIGKILL was sent
	stopWatch          func() bool
}

// stopOn arms a stopper for p on runCtx.
func stopOn(runCtx context.Context, p *process, grace time.Duration) *stopper {
	s := &stopper{killedCh: make(chan struct{})}
	s.stopWatch = context.AfterFunc(runCtx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.finished {
			return
		}
		s.terminated, s.cancelled = true, time.Now()
		_ = terminateGroup(p.pgid)
		s.killTimer = time.AfterFunc(grace, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.finished {
				s.killed = true
				_ = killGroup(p.pgid)
				// The hook itself too, should it have left its group.
				_ = p.cmd.Process.Kill()
				close(s.killedCh)
			}
		})
	})
	return s
}

// terminatedAt reports whether the group was sent SIGTERM, and when.
func (s *stopper) terminatedAt() (bool, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.terminated, s.cancelled
}

// finish disarms s, once the run is over, and reports whether the group
// was sent SIGTERM, and SIGKILL.
func (s *stopper) finish() (terminated, killed bool) {
	s.stopWatch()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	if s.killTimer != nil {
		s.killTimer.Stop()
	}
	return s.terminated, s.killed
}

package hook

import (
	"os"

	"golang.org/x/sys/unix"
)

// stdinFile returns a sealed memfd(2) holding doc, at offset 0, for the
// hook's stdin. The hook reads the same bytes as from a pipe, and may also
// seek, but objgc needs no pipe and no goroutine to write it, and a hook
// that never reads its stdin costs nothing (no EPIPE). The seals
// (F_SEAL_WRITE, F_SEAL_GROW, F_SEAL_SHRINK, F_SEAL_SEAL) keep the hook
// from changing the document. An error (a kernel without memfd_create, a
// seccomp filter that refuses it) makes Run fall back to a pipe.
func stdinFile(doc []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("objgc-hook-stdin", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	// pwrite leaves the offset at 0, where the hook starts reading.
	for off := 0; off < len(doc); {
		n, err := unix.Pwrite(fd, doc[off:], int64(off))
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		off += n
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS,
		unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "objgc-hook-stdin"), nil
}

// outputPipe returns a pipe for the hook's stdout or stderr: r for objgc,
// non-blocking and in the runtime's poller (so that a read deadline ends
// a read), w for the hook, blocking, as a program expects its output to
// be. It takes five system calls where os.Pipe, with the write end made
// blocking again when os.StartProcess takes its descriptor, takes eleven.
func outputPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// O_NONBLOCK is the only status flag the write end has.
	if _, err := unix.FcntlInt(uintptr(fds[1]), unix.F_SETFL, 0); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

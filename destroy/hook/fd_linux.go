package hook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

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

// openHook opens the hook file path for Run, following symbolic links
// (a hook may be one), without blocking on a named pipe (O_NONBLOCK: the
// caller refuses anything but a regular file), and returns it with its
// status (only the status when it is not a regular file: then the file
// is nil). The descriptor is close-on-exec; execOpen gives the hook its
// own copy.
func openHook(path string) (*os.File, os.FileInfo, error) {
	// A device is not opened at all: opening one may do something.
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, fi, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// realPath returns the path of the file f is open on, links resolved,
// as the kernel has it (/proc/self/fd): the file that runs, whatever
// the links on path point to now.
func realPath(f *os.File, path string) (string, error) {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(real) {
		return filepath.EvalSymlinks(path)
	}
	return real, nil
}

// procFD reports whether /proc/self/fd is there to execute a descriptor
// through (a container without /proc has none).
var procFD = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// execOpen makes cmd execute the open hook file f rather than its path:
// the file checked is the file run, whatever replaces the path
// meanwhile. f becomes the hook's descriptor 3 (cmd.ExtraFiles: not
// close-on-exec, as the interpreter of a #! script opens it by
// /proc/self/fd/3 after the kernel started it) and cmd.Path
// /proc/self/fd/3; argv[0] stays the hook's path. A script's $0 is
// therefore /proc/self/fd/3: OBJGC_HOOK holds the path (docs/hooks.md).
// It reports false, leaving cmd to execute the path, when /proc is not
// mounted.
func execOpen(cmd *exec.Cmd, f *os.File) bool {
	if !procFD() {
		return false
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	cmd.Path = "/proc/self/fd/" + strconv.Itoa(2+len(cmd.ExtraFiles))
	return true
}

// changeTime is fi's status change time (ctime) in nanoseconds, which
// every write sets, whatever the writer does to the modification time.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}

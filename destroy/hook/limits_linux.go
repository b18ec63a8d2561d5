package hook

import (
	"os"
	"syscall"
)

// argLimits returns Linux's limits on what execve(2) takes (fs/exec.c):
// MAX_ARG_STRLEN, 32 pages, for one argument or environment string with
// its NUL; and the total of all of them, a quarter of the stack's soft
// limit (RLIMIT_STACK, inherited by the hook), at least ARG_MAX (128 KiB)
// and at most three quarters of _STK_LIM (6 MiB).
func argLimits() (strMax, total int) {
	strMax = 32 * os.Getpagesize()
	const minTotal, maxTotal = 128 << 10, 6 << 20
	total = maxTotal
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err == nil && rl.Cur != ^uint64(0) && rl.Cur/4 < maxTotal {
		total = max(int(rl.Cur/4), minTotal)
	}
	return strMax, total
}

//go:build !linux

package hook

// argLimits returns 0, 0: the limits of execve(2) outside Linux are not
// checked (macOS has one total, kern.argmax, and no limit a string).
func argLimits() (strMax, total int) { return 0, 0 }

//go:build !linux

package snapshot

// adviseHuge is a no-op outside Linux; see huge_linux.go.
func adviseHuge[T any](s []T) {}

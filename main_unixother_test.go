//go:build unix && !linux

package main

import "errors"

func setImmutable(dir string, on bool) error {
	return errors.New("no immutable attribute on this system")
}

package gendocs

import (
	"strings"
	"testing"
	"time"
)

func TestDate(t *testing.T) {
	commit := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	fromGit := func() (time.Time, error) { return commit, nil }
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, err := Date(getenv, fromGit); err != nil || !got.Equal(commit) {
		t.Errorf("without SOURCE_DATE_EPOCH: %v, %v; want the commit time %v", got, err, commit)
	}
	env["SOURCE_DATE_EPOCH"] = "1700000000"
	if got, err := Date(getenv, fromGit); err != nil || got.Unix() != 1700000000 {
		t.Errorf("SOURCE_DATE_EPOCH=1700000000: %v, %v", got, err)
	}
	env["SOURCE_DATE_EPOCH"] = "yesterday"
	if _, err := Date(getenv, fromGit); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("SOURCE_DATE_EPOCH=yesterday: error %v, want one naming the variable", err)
	}
}

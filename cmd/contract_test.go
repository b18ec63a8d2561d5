package cmd

import (
	"testing"

	"github.com/objgc/objgc/destroy"
)

func TestStaleErrorNamesTheFirstDifferences(t *testing.T) {
	diffs := []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7"}
	var err error = &destroy.StaleError{Plan: "p.json", Diffs: diffs}
	if code := exitCode(err); code != ExitStalePlan {
		t.Errorf("exit %d, want %d", code, ExitStalePlan)
	}
	if want := "plan p.json is stale: d1; d2; d3; d4; d5; and 2 more; plan again"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

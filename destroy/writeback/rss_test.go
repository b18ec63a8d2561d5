package writeback

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// resetPeakRSS resets VmHWM (Linux: writing 5 to /proc/self/clear_refs).
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// rss returns a /proc/self/status field in bytes.
func rss(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(field+":")) {
			fields := strings.Fields(string(line[len(field)+1:]))
			if len(fields) > 0 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// BenchmarkNewPlanTiny200k orders the model of 200,000 tiny doomed

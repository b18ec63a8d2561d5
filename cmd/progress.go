package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progressTiming is when a progress line is drawn: Delay is how long a
// run goes before its progress line appears (short runs print nothing
// extra), Every the least time between two redraws.
type progressTiming struct {
	Delay, Every time.Duration
}

// defaultProgressTiming is the timing of a progress line when IO.progress
// is nil: 500 ms before the first draw, 100 ms between redraws.
var defaultProgressTiming = progressTiming{Delay: 500 * time.Millisecond, Every: 100 * time.Millisecond}

// progressLine is the one line of progress that long applies and large
// prunes show on stderr when it is a terminal (in a file or a pipe the
// rewritten line would be noise), rewritten in place with a carriage return.
// Log lines go through Println, which clears the line first so that the two
// never mix. Safe for concurrent use; a progressLine for a stderr that is
// not a terminal only passes log lines on.
type progressLine struct {
	w      io.Writer
	on     bool
	start  time.Time
	timing progressTiming

	mu    sync.Mutex
	last  time.Time
	shown bool
	text  string
}

func newProgressLine(streams *IO) *progressLine {
	timing := defaultProgressTiming
	if streams.progress != nil {
		timing = *streams.progress
	}
	return &progressLine{w: streams.Err, on: streams.IsTTYErr, start: time.Now(), timing: timing}
}

// Update sets the line's text and redraws it, at most every
// timing.Every, once the run is older than timing.Delay.
func (p *progressLine) Update(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on {
		return
	}
	p.text = fmt.Sprintf(format, args...)
	now := time.Now()
	if now.Sub(p.start) < p.timing.Delay || now.Sub(p.last) < p.timing.Every {
		return
	}
	p.last = now
	p.draw()
}

// draw writes the line; the caller holds mu. \x1b[K erases what a
// longer previous line left.
func (p *progressLine) draw() {
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.text)
	p.shown = true
}

// Println writes a log line above the progress line.
func (p *progressLine) Println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, line)
	if p.shown {
		p.draw()
	}
}

// Done erases the line for good.
func (p *progressLine) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	p.on = false
}

package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-ctx/git-ctx/sessions"
)

// Timing of the session progress line: nothing for a command that ends
// within progressDelay, then a redraw every progressTick. Variables so that
// tests can show the line at once.
var (
	progressDelay = time.Second
	progressTick  = 200 * time.Millisecond
)

// sessionProgress returns the progress display of a session command: on
// stderr when it is a terminal and neither -q nor GIT_CTX_QUIET is given,
// else nil (nothing shown). It never writes to stdout, so --json output
// stays clean.
func sessionProgress(c *cli.Context) sessions.Progress {
	if quiet(c) {
		return nil
	}
	f, ok := c.App.ErrWriter.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	m := newProgressMeter(f, time.Now)
	m.tick = progressTick
	return m
}

// progressMeter draws one self-overwriting status line ("git-ctx:
// <phase> <done>/<total> (<rate>)"), starting progressDelay after the first
// phase, and clears it on Done.
type progressMeter struct {
	mu         sync.Mutex
	w          io.Writer
	now        func() time.Time
	start      time.Time // the first phase (zero: none yet)
	phase      string
	total      int64
	done       int64
	phaseStart time.Time
	shown      bool
	over       bool
	tick       time.Duration // redraw period (0: only on events; tests)
	stop       chan struct{}
}

func newProgressMeter(w io.Writer, now func() time.Time) *progressMeter {
	return &progressMeter{w: w, now: now}
}

// runLocked starts redrawing every tick, until Done.
func (m *progressMeter) runLocked(tick time.Duration) {
	stop := make(chan struct{})
	m.stop = stop
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				m.draw()
			}
		}
	}()
}

// Phase implements sessions.Progress.
func (m *progressMeter) Phase(name string, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.over {
		return
	}
	if m.start.IsZero() {
		m.start = now
		if m.tick > 0 {
			m.runLocked(m.tick)
		}
	}
	m.phase, m.total, m.done, m.phaseStart = name, total, 0, now
	m.drawLocked()
}

// Add implements sessions.Progress.
func (m *progressMeter) Add(n int64) {
	m.mu.Lock()
	m.done += n
	m.mu.Unlock()
}

// Done implements sessions.Progress: it stops redrawing and clears the
// line if one was shown.
func (m *progressMeter) Done() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.over {
		return
	}
	m.over = true
	if m.stop != nil {
		close(m.stop)
	}
	if m.shown {
		fmt.Fprint(m.w, "\r\x1b[K")
		m.shown = false
	}
}

func (m *progressMeter) draw() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drawLocked()
}

func (m *progressMeter) drawLocked() {
	if m.over || m.start.IsZero() {
		return
	}
	now := m.now()
	if now.Sub(m.start) < progressDelay {
		return
	}
	fmt.Fprintf(m.w, "\r\x1b[K%s", m.lineLocked(now))
	m.shown = true
}

// lineLocked is the status line without control characters.
func (m *progressMeter) lineLocked(now time.Time) string {
	line := "git-ctx: " + m.phase
	if m.total == 0 && m.done == 0 {
		return line + "…"
	}
	line += " " + humanBytes(m.done)
	if m.total > 0 {
		line += " / " + humanBytes(m.total)
	}
	if el := now.Sub(m.phaseStart).Seconds(); el > 0 {
		line += fmt.Sprintf(" (%s/s)", humanBytes(int64(float64(m.done)/el)))
	}
	return line
}

// humanBytes renders n in B, KiB, MiB or GiB with one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

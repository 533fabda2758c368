package inspector

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpscope/acpscope/capture"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"golang.org/x/term"
)

// Options configure Run.
type Options struct {
	// Dir is the capture library shown first; capture.DefaultDir() when
	// empty.
	Dir string
	// Path opens one capture directly; Esc then leads to the library.
	Path string
	// Seq, with Path, selects that message first, its detail shown and
	// following a live capture paused (acpscope search --open).
	Seq uint64
	// Screen to draw on; nil uses the terminal. Tests pass a
	// tcell.SimulationScreen.
	Screen tcell.Screen

	// source, set by tests, is shown instead of opening Path.
	source capture.Source
	// ready, set by tests, receives the app just before it runs.
	ready func(*app)
}

// redrawEvery is the tick that batches worker results and live arrivals
// into at most one redraw.
const redrawEvery = 100 * time.Millisecond

// Run shows the inspector until the user quits. It returns ErrNoTerminal
// when there is no terminal to draw on, and an error when Path cannot be
// opened.
func Run(opts Options) error {
	screen := opts.Screen
	if screen == nil {
		if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
			return ErrNoTerminal
		}
		s, err := tcell.NewScreen()
		if err != nil {
			return fmt.Errorf("%w (%v)", ErrNoTerminal, err)
		}
		screen = s
	}
	if opts.Dir == "" && opts.Path == "" && opts.source == nil {
		dir, err := capture.DefaultDir()
		if err != nil {
			return fmt.Errorf("finding the capture directory: %w", err)
		}
		opts.Dir = dir
	}
	// The capture is opened before the screen is taken over, so that an
	// error leaves the terminal as it was.
	src := opts.source
	if src == nil && opts.Path != "" {
		var err error
		if src, err = capture.OpenSource(opts.Path); err != nil {
			return err // it names the file and what to do
		}
	}
	a := newApp(opts)
	a.screen = screen
	a.tv.SetScreen(screen)
	if src != nil {
		a.showCapture(opts.Path, src, "")
		if opts.Seq != 0 {
			a.cv.follow = false
			a.cv.selectSeq(opts.Seq)
		}
	} else {
		a.showLibrary()
	}
	go a.poster()
	if opts.ready != nil {
		opts.ready(a)
	}
	err := a.tv.Run()
	a.shutdown()
	return err
}

// app is the running inspector. Its fields belong to the UI goroutine,
// except the mailbox (mu, posts), done and the wait groups.
type app struct {
	tv     *tview.Application
	pages  *tview.Pages
	opts   Options
	lib    *library
	cv     *captureView
	screen tcell.Screen
	// heldPage is the open list of held messages, nil when closed.
	heldPage *heldPage
	// heldOpen mirrors heldPage != nil for the poster, which redraws
	// the held list's ages once a second while it is open.
	heldOpen atomic.Bool

	mu       sync.Mutex
	posts    []func()
	wake     chan struct{}
	done     chan struct{} // closed when quitting: workers stop
	quitting bool
	posterWG sync.WaitGroup
	workers  sync.WaitGroup
}

func newApp(opts Options) *app {
	a := &app{
		tv:    tview.NewApplication(),
		pages: tview.NewPages(),
		opts:  opts,
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	a.posterWG.Add(1)
	a.tv.SetRoot(a.pages, true)
	a.tv.SetInputCapture(a.globalKeys)
	return a
}

// post hands f to the UI goroutine. Any goroutine may call it; it never
// blocks. The poster runs posted functions at most once per tick.
func (a *app) post(f func()) {
	a.mu.Lock()
	a.posts = append(a.posts, f)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// poster is the one goroutine that calls QueueUpdateDraw. Owned by Run; it
// ends when done closes, and quit waits for it before stopping tview, so
// it is never left blocked in a queue nobody drains.
func (a *app) poster() {
	defer a.posterWG.Done()
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	pending := false
	lastAges := time.Now()
	for {
		select {
		case <-a.done:
			return
		case <-a.wake:
			pending = true
		case now := <-tick.C:
			if a.heldOpen.Load() && now.Sub(lastAges) >= time.Second {
				lastAges, pending = now, true
				a.mu.Lock()
				a.posts = append(a.posts, a.refreshHeld)
				a.mu.Unlock()
			}
			if pending {
				pending = false
				a.tv.QueueUpdateDraw(a.drain)
			}
		}
	}
}

// refreshHeld redraws the held list, whose ages grow as time passes.
func (a *app) refreshHeld() {
	if a.heldPage != nil {
		a.heldPage.refresh()
	}
}

// drain runs the posted functions on the UI goroutine.
func (a *app) drain() {
	a.mu.Lock()
	posts := a.posts
	a.posts = nil
	a.mu.Unlock()
	for _, f := range posts {
		f()
	}
}

// quit stops the application from a handler: workers are told first, the
// poster is waited for, then tview is stopped.
func (a *app) quit() {
	if a.quitting {
		return
	}
	a.quitting = true
	close(a.done)
	go func() { // quitter: ends once tview is told to stop
		a.posterWG.Wait()
		a.tv.Stop()
	}()
}

// shutdown runs after tview stopped: it stops every worker and closes the
// open capture.
func (a *app) shutdown() {
	if !a.quitting {
		a.quitting = true
		close(a.done)
	}
	waitTimeout(&a.posterWG, time.Second)
	if a.cv != nil {
		a.cv.close()
	}
	if a.lib != nil {
		a.lib.stopJobs()
	}
	waitTimeout(&a.workers, 5*time.Second)
	if a.cv != nil {
		a.cv.src.Close()
	}
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	select {
	case <-c:
	case <-time.After(d):
	}
}

// job is one worker's task; the UI stops it when its result is no longer
// wanted.
type job struct {
	stopc    chan struct{}
	finished chan struct{} // closed when the worker returns
	once     sync.Once
	app      *app
}

// start runs fn on a worker goroutine owned by the app.
func (a *app) start(fn func(j *job)) *job {
	j := &job{stopc: make(chan struct{}), finished: make(chan struct{}), app: a}
	a.workers.Add(1)
	go func() {
		defer a.workers.Done()
		defer close(j.finished)
		fn(j)
	}()
	return j
}

func (j *job) stop() {
	if j != nil {
		j.once.Do(func() { close(j.stopc) })
	}
}

// stopped reports whether the job or the whole app was stopped.
func (j *job) stopped() bool {
	select {
	case <-j.stopc:
		return true
	case <-j.app.done:
		return true
	default:
		return false
	}
}

// pacer is the checkpoint a long scan passes for every record: every
// 1024 records it stops the scan if the job was stopped and reports
// progress at most every progressEvery.
type pacer struct {
	j        *job
	progress func(done, total uint64)
	last     time.Time
}

func (j *job) pacer(progress func(done, total uint64)) *pacer {
	return &pacer{j: j, progress: progress, last: time.Now()}
}

// tick reports false when the scan should stop.
func (p *pacer) tick(done, total uint64) bool {
	if done%1024 != 0 {
		return true
	}
	if p.j.stopped() {
		return false
	}
	if p.progress != nil && time.Since(p.last) > progressEvery {
		p.last = time.Now()
		p.progress(done, total)
	}
	return true
}

// post hands the job's result to the UI goroutine, dropped if the job was
// stopped in between.
func (j *job) post(f func()) {
	j.app.post(func() {
		if !j.stopped() {
			f()
		}
	})
}

// globalKeys handles the keys that work everywhere.
func (a *app) globalKeys(ev *tcell.EventKey) *tcell.EventKey {
	if ev.Key() == tcell.KeyCtrlC {
		a.quit()
		return nil
	}
	if a.typing() {
		return ev
	}
	if ev.Key() == tcell.KeyRune && ev.Rune() == 'Q' {
		a.quit()
		return nil
	}
	return ev
}

// typing reports whether an input field has focus, where letters are text.
func (a *app) typing() bool {
	switch a.tv.GetFocus().(type) {
	case *tview.InputField, *tview.TextArea:
		return true
	}
	return false
}

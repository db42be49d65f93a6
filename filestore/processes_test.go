//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// The processes of these tests are this test binary again, run with
// NOUS_FILESTORE_CHILD set to what the child does, in the directory
// NOUS_FILESTORE_DIR. A child prints a line after each save that returned
// nil, and exits 0 when done, 3 when it lost a race it was meant to.

const shared = "the shared session"

// TestChild is the child process of the tests of this file; run alone, it
// does nothing.
func TestChild(t *testing.T) {
	mode, dir := os.Getenv("NOUS_FILESTORE_CHILD"), os.Getenv("NOUS_FILESTORE_DIR")
	if mode == "" {
		t.Skip("the child of the tests of several processes")
	}
	n, _ := strconv.Atoi(os.Getenv("NOUS_FILESTORE_N"))
	me := os.Getenv("NOUS_FILESTORE_ME")
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(2)
	}
	s, err := filestore.Open(dir)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	switch mode {
	case "own": // n turns of a session of its own, named after it
		c := nous.NewContext(nous.WithLogName(me), nous.WithLogLabels(map[string]string{"by": "child"}))
		for i := range n {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint(me, " turn ", i))); err != nil {
				fail(err)
			}
			if err := c.Save(ctx, s); err != nil {
				fail(err)
			}
			fmt.Println("saved", i)
		}
	case "race": // n turns of the shared session (0: until killed), each loaded, added, saved again on a conflict
		for i := 0; n == 0 || i < n; i++ {
			turn := fmt.Sprint(me, " turn ", i)
			for {
				c, err := nous.LoadByName(ctx, s, shared)
				if err != nil {
					fail(err)
				}
				c.Deps["last"] = strings.Repeat(turn, 200) // a state of a few kilobytes: a frame a kill may cut
				if err := c.AddMessage(nous.UserMessage(turn)); err != nil {
					fail(err)
				}
				err = c.Save(ctx, s)
				if err == nil {
					break
				}
				if !errors.Is(err, nous.ErrConflict) {
					fail(err)
				}
			}
			fmt.Println("saved", turn)
		}
	case "name": // create the contested name once
		c := nous.NewContext(nous.WithLogName("contested"))
		if err := c.AddMessage(nous.UserMessage(me)); err != nil {
			fail(err)
		}
		switch err := c.Save(ctx, s); {
		case errors.Is(err, nous.ErrConflict):
			os.Exit(3)
		case err != nil:
			fail(err)
		}
		fmt.Println("saved", c.Log().ID())
	case "timed": // once a line comes on stdin, n turns of each session its names (comma-separated) in turn; then it prints the time taken
		if err := timedTurns(ctx, s, strings.Split(me, ","), n); err != nil {
			fail(err)
		}
	case "migrate": // once a line comes on stdin, a turn of each log its IDs (comma-separated) name, loaded and saved again on a conflict
		if err := migrateTurns(ctx, s, strings.Split(me, ","), n); err != nil {
			fail(err)
		}
	default:
		fail(fmt.Errorf("no mode %q", mode))
	}
	s.Close()
	os.Exit(0)
}

// timedTurns is the child of mode "timed": it makes a session of each
// name, and once a line comes on stdin saves n turns of each in turn, then
// prints the time taken.
func timedTurns(ctx context.Context, s nous.Store, names []string, n int) error {
	var cs []*nous.Context
	for _, name := range names {
		cs = append(cs, nous.NewContext(nous.WithLogName(name)))
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	began := time.Now()
	for i := range n {
		for _, c := range cs {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
				return err
			}
			c.Deps["i"] = i
			if err := c.Save(ctx, s); err != nil {
				return err
			}
		}
	}
	fmt.Println("took", time.Since(began).Nanoseconds())
	return nil
}

// migrateTurns is the child of mode "migrate": once a line comes on
// stdin, it saves a turn of child n in each log of ids, and prints each
// ID once saved.
func migrateTurns(ctx context.Context, s nous.Store, ids []string, n int) error {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	for _, id := range ids {
		if err := turnOf(ctx, s, uuid.MustParse(id), fmt.Sprint("a turn of ", n)); err != nil {
			return err
		}
		fmt.Println("saved", id)
	}
	return nil
}

// turnOf loads log id from s, adds a user message of text and saves it,
// again from a load when another saved first.
func turnOf(ctx context.Context, s nous.Store, id uuid.UUID, text string) error {
	for {
		c, err := nous.Load(ctx, s, id)
		if err != nil {
			return err
		}
		if err := c.AddMessage(nous.UserMessage(text)); err != nil {
			return err
		}
		if err = c.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
			return err
		}
	}
}

// Processes that open a directory of files of version 4 at once and save
// a turn of each log migrate each log once: every key known, the
// migration's event once, every process's turn stored once.
func TestVersion4MigratesOnceAcrossProcesses(t *testing.T) {
	skipShort(t)
	dir, logs := filestore.CopyVersion4(t)
	var ids []string
	for _, l := range logs {
		ids = append(ids, l.ID.String())
	}
	const procs = 4
	var children []*child
	for i := range procs {
		children = append(children, start(t, dir, "migrate", strings.Join(ids, ","), i))
	}
	for _, c := range children {
		if _, err := io.WriteString(c.in, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range children {
		if code, saved := c.wait(t); code != 0 || len(saved) != len(logs) {
			t.Fatalf("child %d: exit %d, %d saves", i, code, len(saved))
		}
	}
	s := open(t, dir)
	for _, l := range logs {
		c, err := nous.Load(context.Background(), s, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range l.Keys {
			if !c.HasBatch(k) {
				t.Fatalf("log %s: the batch key %q is lost", l.ID, k)
			}
		}
		if seqs := migrationEvents(t, s, l); !slices.Equal(seqs, []int64{l.Head + 1}) {
			t.Fatalf("log %s: the migration's event at seqs %v, want once, at %d", l.ID, seqs, l.Head+1)
		}
		turns := map[string]int{}
		for _, m := range c.Messages() {
			turns[m.Content]++
		}
		for i := range procs {
			if n := turns[fmt.Sprint("a turn of ", i)]; n != 1 {
				t.Fatalf("log %s holds child %d's turn %d times, want once", l.ID, i, n)
			}
		}
	}
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	in    io.WriteCloser // its stdin
	lines chan string    // what it printed, closed when its output ends
}

// start starts a child doing mode in dir, as me, n times.
func start(t testing.TB, dir, mode, me string, n int) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$")
	cmd.Env = append(os.Environ(), "NOUS_FILESTORE_CHILD="+mode, "NOUS_FILESTORE_DIR="+dir, "NOUS_FILESTORE_ME="+me, fmt.Sprint("NOUS_FILESTORE_N=", n))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, lines: make(chan string, 1024)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

// wait waits for the child to exit and returns its exit code and what it
// printed that was not PASS or the like.
func (c *child) wait(t testing.TB) (int, []string) {
	t.Helper()
	var saved []string
	for line := range c.lines {
		if after, ok := strings.CutPrefix(line, "saved "); ok {
			saved = append(saved, after)
		} else if strings.HasPrefix(line, "error") {
			t.Errorf("child: %s", line)
		}
	}
	err := c.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), saved
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, saved
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes that fsync")
	}
}

// Processes serving sessions of their own in one directory at once each
// store every save: none waits for another's, and every session loads by
// its name with all its turns.
func TestProcessesServeTheirOwnSessions(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	const procs, turns = 4, 30
	var children []*child
	for i := range procs {
		children = append(children, start(t, dir, "own", fmt.Sprint("child ", i), turns))
	}
	for i, c := range children {
		if code, saved := c.wait(t); code != 0 || len(saved) != turns {
			t.Fatalf("child %d: exit %d, %d saves", i, code, len(saved))
		}
	}
	s := open(t, dir)
	for i := range procs {
		c, err := nous.LoadByName(context.Background(), s, fmt.Sprint("child ", i))
		if err != nil {
			t.Fatal(err)
		}
		for j, m := range c.Messages() {
			if want := fmt.Sprint("child ", i, " turn ", j); m.Content != want || j >= turns {
				t.Fatalf("child %d's message %d is %q, want %q", i, j, m.Content, want)
			}
		}
		if c.Log().Len() != 2*turns { // each turn's message and its batch event
			t.Fatalf("child %d's session has %d events, want %d", i, c.Log().Len(), 2*turns)
		}
	}
	n := 0
	for _, err := range s.List(context.Background(), nous.ListOptions{Labels: map[string]string{"by": "child"}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != procs {
		t.Fatalf("%d sessions listed by the children's label, want %d", n, procs)
	}
}

// newShared creates the shared session in dir.
func newShared(t *testing.T, dir string) {
	t.Helper()
	s := open(t, dir)
	c := nous.NewContext(nous.WithLogName(shared))
	if err := c.AddMessage(nous.UserMessage("start")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// checkShared loads the shared session of dir and checks that it holds
// every turn of acked once, seqs 1..n, and returns it.
func checkShared(t *testing.T, s nous.Store, acked []string) *nous.Context {
	t.Helper()
	c, err := nous.LoadByName(context.Background(), s, shared)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, e := range c.Log().Events() {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.Message != nil { // and deps_update events, of the turns' changes of the deps
			seen[e.Message.Content]++
		}
	}
	for _, turn := range acked {
		if seen[turn] != 1 {
			t.Fatalf("the acknowledged %q is stored %d times", turn, seen[turn])
		}
	}
	return c
}

// Processes racing on one session, each loading, adding a turn and saving
// again on a conflict, as replicas on a database would: every turn is
// stored once, nothing is interleaved or lost.
func TestProcessesRaceOnOneSession(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	newShared(t, dir)
	const procs, turns = 4, 15
	var children []*child
	for i := range procs {
		children = append(children, start(t, dir, "race", fmt.Sprint("child ", i), turns))
	}
	var acked []string
	for i, c := range children {
		code, saved := c.wait(t)
		if code != 0 || len(saved) != turns {
			t.Fatalf("child %d: exit %d, %d saves", i, code, len(saved))
		}
		acked = append(acked, saved...)
	}
	c := checkShared(t, open(t, dir), acked)
	if n := len(c.Messages()); n != 1+procs*turns {
		t.Fatalf("%d messages, want %d", n, 1+procs*turns)
	}
}

// A process killed with SIGKILL while it saves to a session another
// process saves to as well leaves at most a torn frame, which the other
// cuts and goes on: every save either acknowledged is stored once, and
// the session loads and saves on.
func TestKilledWriterBesideAnother(t *testing.T) {
	skipShort(t)
	for round := range 3 {
		dir := t.TempDir()
		newShared(t, dir)
		victim, other := start(t, dir, "race", "victim", 0), start(t, dir, "race", "other", 0)
		var acked []string
		var mu sync.Mutex
		collect := func(c *child, until int) {
			for n := 0; n < until; n++ {
				line, ok := <-c.lines
				if !ok {
					return
				}
				if turn, ok := strings.CutPrefix(line, "saved "); ok {
					mu.Lock()
					acked = append(acked, turn)
					mu.Unlock()
				} else {
					t.Errorf("child: %s", line)
				}
			}
		}
		collect(victim, 10+5*round)
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		victim.cmd.Wait()
		for range victim.lines { // what it printed before it died, whose saves returned nil
		}
		collect(other, 20) // the other goes on past the victim's torn frame
		if err := other.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		other.cmd.Wait()
		s := open(t, dir)
		c := checkShared(t, s, acked)
		if err := c.AddMessage(nous.UserMessage("after the kills")); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatalf("round %d: a save after the kills: %v", round, err)
		}
	}
}

// Processes racing to create one name: exactly one does, the others get
// ErrConflict and store nothing.
func TestNamesRaceAcrossProcesses(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	const procs = 6
	var children []*child
	for i := range procs {
		children = append(children, start(t, dir, "name", fmt.Sprint("child ", i), 1))
	}
	won, lost := 0, 0
	for i, c := range children {
		switch code, _ := c.wait(t); code {
		case 0:
			won++
		case 3:
			lost++
		default:
			t.Fatalf("child %d: exit %d", i, code)
		}
	}
	if won != 1 || lost != procs-1 {
		t.Fatalf("%d processes created the name, %d conflicted; want 1 and %d", won, lost, procs-1)
	}
	s := open(t, dir)
	n := 0
	for _, err := range s.List(context.Background(), nous.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d logs stored, want the winner's alone", n)
	}
}

// Watch follows the saves of another process, within PollInterval of each.
func TestWatchSeesOtherProcesses(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	newShared(t, dir)
	s := open(t, dir)
	c, err := nous.LoadByName(context.Background(), s, shared)
	if err != nil {
		t.Fatal(err)
	}
	const turns = 10
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	writer := start(t, dir, "race", "writer", turns)
	next, turn := int64(2), 0
	for e, err := range s.Watch(ctx, c.Log().ID(), 1) {
		if err != nil {
			t.Fatalf("watched up to seq %d: %v", next-1, err)
		}
		if e.Seq != next {
			t.Fatalf("watched seq %d, want seq %d", e.Seq, next)
		}
		next++
		if e.Type == nous.EventDepsUpdate || e.Type == nous.EventBatch { // the turn's change of the deps, the end of its batch
			continue
		}
		if e.Message == nil || e.Message.Content != fmt.Sprint("writer turn ", turn) {
			t.Fatalf("watched seq %d %v, want writer turn %d", e.Seq, e.Message, turn)
		}
		if turn++; turn == turns {
			break
		}
	}
	if code, saved := writer.wait(t); code != 0 || len(saved) != turns {
		t.Fatalf("the writer: exit %d, %d saves", code, len(saved))
	}
}

// A torn frame at the end of a log's file, as a writer killed mid-save
// leaves it, is no one's: a reader leaves it alone and reads the log
// without it, and the next writer, through any handle, cuts it and saves.
func TestTornFrameOfAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	ctx := context.Background()
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("first")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	path := dir + "/" + c.Log().ID().String() + ".log"
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The first half of a frame, as a second save cut short leaves it.
	d := c.Clone()
	if err := d.AddMessage(nous.UserMessage("never acknowledged")); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	if err := d.Save(ctx, open(t, scratch)); err != nil {
		t.Fatal(err)
	}
	frame, err := os.ReadFile(scratch + "/" + d.Log().ID().String() + ".log")
	if err != nil {
		t.Fatal(err)
	}
	torn := frame[8 : 8+(len(frame)-8)/2]
	if err := os.WriteFile(path, append(slices.Clone(whole), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*filestore.Store{a, b} {
		got, err := nous.Load(ctx, s, c.Log().ID())
		if err != nil || got.Len() != 1 {
			t.Fatalf("a reader of the torn file: %v, %d messages", err, got.Len())
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != int64(len(whole)+len(torn)) {
		t.Fatalf("a reader changed the file: %d bytes, was %d", fi.Size(), len(whole)+len(torn))
	}
	if err := c.AddMessage(nous.UserMessage("second")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx, b); err != nil {
		t.Fatalf("a save after a torn frame: %v", err)
	}
	for _, s := range []nous.Store{a, b, open(t, dir)} {
		got, err := nous.Load(ctx, s, c.Log().ID())
		if err != nil || got.Len() != 2 {
			t.Fatalf("after the save: %v, %d messages", err, got.Len())
		}
		if m, _ := got.LastMessage(); m.Content != "second" {
			t.Fatalf("the last message is %q", m.Content)
		}
	}
}

// BenchmarkTwoProcesses: two processes saving a session each, at once,
// against one process saving both sessions in turn, the same saves,
// fsynced, in one directory: per save, and the ratio of the two
// (two-procs/one-proc; below 1 when the two go faster).
func BenchmarkTwoProcesses(b *testing.B) {
	const n = 100 // saves of each session
	var one, two time.Duration
	round := func(names ...string) time.Duration {
		dir := b.TempDir()
		var cs []*child
		for _, me := range names {
			cs = append(cs, start(b, dir, "timed", me, n))
		}
		for _, c := range cs {
			if line := <-c.lines; line != "ready" {
				b.Fatalf("child: %s", line)
			}
		}
		began := time.Now()
		for _, c := range cs {
			io.WriteString(c.in, "go\n")
		}
		for _, c := range cs {
			for line := range c.lines {
				if strings.HasPrefix(line, "took") {
					break
				}
				if strings.HasPrefix(line, "error") {
					b.Fatalf("child: %s", line)
				}
			}
		}
		took := time.Since(began)
		for _, c := range cs {
			if code, _ := c.wait(b); code != 0 {
				b.Fatalf("child exited %d", code)
			}
		}
		return took
	}
	for b.Loop() {
		one += round("a,b")
		two += round("a", "b")
	}
	saves := float64(b.N * 2 * n)
	b.ReportMetric(float64(one.Nanoseconds())/saves, "one-proc-ns/save")
	b.ReportMetric(float64(two.Nanoseconds())/saves, "two-procs-ns/save")
	b.ReportMetric(float64(two)/float64(one), "two/one")
}

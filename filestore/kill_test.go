//go:build unix

package filestore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// A process killed with SIGKILL in the middle of a loop of saves loses no
// save it acknowledged: the child prints each save after Save returns, the
// parent kills it mid-loop, reopens the directory and finds every printed
// save, in order, and can save on. In half the rounds every save changes
// a 20 KB state, so that the file is rewritten every few saves and the
// kill comes during a rewrite as often as not.
func TestKilledInASaveLoop(t *testing.T) {
	if dir := os.Getenv("NOUS_FILESTORE_SAVE_LOOP"); dir != "" {
		s, err := filestore.Open(dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		big := os.Getenv("NOUS_FILESTORE_BIG_STATE") != ""
		c := nous.NewContext()
		for i := 0; ; i++ {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
				os.Exit(2)
			}
			if big { // a state that changes whole at every save: the file is rewritten every few saves
				c.MergeDeps(map[string]any{"notes": strings.Repeat(fmt.Sprintf("%07d ", i), 20<<10/8)})
			}
			if err := c.Save(context.Background(), s); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			fmt.Println(c.Log().ID(), c.Log().Len())
		}
	}
	if testing.Short() {
		t.Skip("runs a child process that fsyncs in a loop")
	}
	for round := range 6 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledInASaveLoop$")
		cmd.Env = append(os.Environ(), "NOUS_FILESTORE_SAVE_LOOP="+dir)
		big := round%2 == 1
		if big {
			cmd.Env = append(cmd.Env, "NOUS_FILESTORE_BIG_STATE=1")
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var id uuid.UUID
		var acked int64
		lines := bufio.NewScanner(out)
		for lines.Scan() && acked < int64(20+15*(round/2))*(1+3*int64(round%2)) {
			f := strings.Fields(lines.Text())
			if len(f) != 2 || f[0] == "error" {
				t.Fatalf("child: %s", lines.Text())
			}
			id = uuid.MustParse(f[0])
			if acked, err = strconv.ParseInt(f[1], 10, 64); err != nil {
				t.Fatal(err)
			}
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
			t.Fatal(err)
		}
		cmd.Wait()

		s := open(t, dir)
		c, err := nous.Load(context.Background(), s, id)
		if err != nil {
			t.Fatalf("round %d: load after the kill: %v", round, err)
		}
		if int64(c.Log().Len()) < acked {
			t.Fatalf("round %d: %d events stored, %d acknowledged", round, c.Log().Len(), acked)
		}
		msgs := c.Messages()
		for i, m := range msgs {
			if m.Content != fmt.Sprint("turn ", i) {
				t.Fatalf("round %d: message %d is %q", round, i, m.Content)
			}
		}
		if notes, _ := c.Deps["notes"].(string); big && notes != strings.Repeat(fmt.Sprintf("%07d ", len(msgs)-1), 20<<10/8) {
			t.Fatalf("round %d: the state is not that of the last save stored (%d turns): %.20q", round, len(msgs), notes)
		}
		// The events hold each change of the notes (deps_update events);
		// the state, written whole at each save, is rewritten in place.
		var events int64
		for seq := range int64(c.Log().Len()) {
			b, _ := c.AppendEventJSON(nil, seq+1)
			events += int64(len(b))
		}
		if fi, err := os.Stat(filepath.Join(dir, id.String()+".log")); err != nil || big && fi.Size() > events+acked*(20<<10)/4 {
			t.Fatalf("round %d: a file of %d bytes after %d saves of a 20 KB state, %d bytes of events: not rewritten (%v)", round, fi.Size(), len(msgs), events, err)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); big && len(tmps) > 1 {
			t.Fatalf("round %d: %d temporary files left by one kill", round, len(tmps))
		}
		if err := c.AddMessage(nous.UserMessage("after the kill")); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatalf("round %d: save after the kill: %v", round, err)
		}
	}
}

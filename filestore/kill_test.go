//go:build unix

package filestore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
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
// save, in order, and can save on.
func TestKilledInASaveLoop(t *testing.T) {
	if dir := os.Getenv("NOUS_FILESTORE_SAVE_LOOP"); dir != "" {
		s, err := filestore.Open(dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		c := nous.NewContext()
		for i := 0; ; i++ {
			if err := c.AddMessage(nous.UserMessage(fmt.Sprint("turn ", i))); err != nil {
				os.Exit(2)
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
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledInASaveLoop$")
		cmd.Env = append(os.Environ(), "NOUS_FILESTORE_SAVE_LOOP="+dir)
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
		for lines.Scan() && acked < int64(20+15*round) {
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
		for i, m := range c.Messages() {
			if m.Content != fmt.Sprint("turn ", i) {
				t.Fatalf("round %d: message %d is %q", round, i, m.Content)
			}
		}
		if err := c.AddMessage(nous.UserMessage("after the kill")); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(context.Background(), s); err != nil {
			t.Fatalf("round %d: save after the kill: %v", round, err)
		}
	}
}

// Command approval runs a turn that stops at a call needing approval, and
// has it decided by a second process: a small HTTP handler any operator's
// tool could call, which lists the calls that wait and records a decision
// in the session's log. The agent's process then resumes the turn from the
// log; it could as well have restarted meanwhile, or be another process.
//
//	go run ./examples/approval
//
// The second process is this program run with -serve; the model is a fake
// that pays an invoice, so no network or key is needed.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
	"github.com/nous-go/nous/filestore"
)

func main() {
	dir := flag.String("dir", "", "the file store's directory (a new one if empty)")
	serve := flag.Bool("serve", false, "serve the approval handler (the second process)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "nous-approval")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	store, err := filestore.Open(*dir)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	r := &agent.Runner{Model: model{}, Tools: []agent.Tool{payTool()}, Store: store}
	if *serve {
		log.Fatal(serveApprovals(r))
	}
	if err := run(r, *dir); err != nil {
		log.Fatal(err)
	}
}

// serveApprovals is the second process: it prints the address it listens
// on, then serves GET /pending?session=s (the calls that wait, as JSON)
// and POST /decide?session=s&call=id&request=n&digest=d&approve=true|false&reason=...
func serveApprovals(r *agent.Runner) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pending", func(w http.ResponseWriter, req *http.Request) {
		c, err := nous.LoadByName(req.Context(), r.Store, req.URL.Query().Get("session"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(c.Pending().Calls)
	})
	mux.HandleFunc("POST /decide", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		request, _ := strconv.ParseInt(q.Get("request"), 10, 64)
		d := nous.Decision{CallID: q.Get("call"), Request: request, Digest: q.Get("digest"),
			Approve: q.Get("approve") == "true", Reason: q.Get("reason"), By: "operator"}
		if err := r.Decide(req.Context(), q.Get("session"), d); err != nil {
			http.Error(w, err.Error(), http.StatusConflict) // stale: read /pending again
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return http.Serve(ln, mux)
}

// run is the agent's process: a turn that stops at the payment, the
// decision made by the second process over HTTP, the turn resumed.
func run(r *agent.Runner, dir string) error {
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	server := exec.Command(self, "-serve", "-dir", dir)
	out, err := server.StdoutPipe()
	if err != nil {
		return err
	}
	if err := server.Start(); err != nil {
		return err
	}
	defer server.Process.Kill()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return err
	}
	base := "http://" + addr[:len(addr)-1]

	turn, err := r.Run(ctx, "invoices", agent.Input{Key: "invoice-77", Messages: []nous.Message{nous.UserMessage("Pay invoice 77.")}})
	if err != nil {
		return err
	}
	fmt.Printf("the turn waits for %d decision(s)\n", len(turn.Waiting))

	// An operator's tool, elsewhere: list what waits, and approve it.
	resp, err := http.Get(base + "/pending?session=invoices")
	if err != nil {
		return err
	}
	var waiting []nous.PendingCall
	err = json.NewDecoder(resp.Body).Decode(&waiting)
	resp.Body.Close()
	if err != nil || len(waiting) != 1 {
		return fmt.Errorf("pending: %v %v", waiting, err)
	}
	w := waiting[0]
	fmt.Printf("operator sees %s(%s), %s; approves it\n", w.Call.Name, w.Call.Arguments, w.State)
	decide := url.Values{"session": {"invoices"}, "call": {w.Call.ID}, "request": {strconv.FormatInt(w.Request, 10)}, "digest": {w.Digest}, "approve": {"true"}}
	resp, err = http.Post(base+"/decide?"+decide.Encode(), "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("decide: %s", resp.Status)
	}

	turn, err = r.Run(ctx, "invoices", agent.Input{}) // from the log: any process could
	if err != nil {
		return err
	}
	fmt.Println("model:", turn.Reply.Text())
	fmt.Println("stored in", filepath.Base(dir)+":", turn.Context.Log().Len(), "events")
	return nil
}

// payTool pays an invoice; every call needs approval.
func payTool() agent.Tool {
	t, err := agent.NewTool("pay", "Pay an invoice.", func(_ context.Context, _ nous.RunContext, a struct {
		Invoice int `json:"invoice"`
		Amount  int `json:"amount"`
	}) (string, nous.ContextUpdate, error) {
		return fmt.Sprintf("invoice %d paid: %d EUR", a.Invoice, a.Amount), nous.ContextUpdate{}, nil
	})
	if err != nil {
		panic(err)
	}
	t.Approve = func(nous.ToolCall) bool { return true }
	t.InDoubt = agent.AtMostOnce
	return t
}

// model is a fake model: to the user, a call of pay; to its result, a
// sentence.
type model struct{}

func (model) Call(_ context.Context, c *nous.Context, _ nous.ModelRequest) (nous.Message, error) {
	reply := nous.AssistantMessage("", nous.ToolCall{ID: "pay_1", Name: "pay", Arguments: []byte(`{"invoice":77,"amount":120}`)})
	if last, _ := c.LastMessage(); last.Role == nous.RoleTool {
		reply = nous.AssistantMessage("Done: " + last.Content + ".")
	}
	if err := c.AddMessage(reply); err != nil {
		return nous.Message{}, err
	}
	c.EndStep(nous.Step{Provider: "fake", Model: "fake"})
	return reply, nil
}

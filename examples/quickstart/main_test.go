package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// Two runs on each API: in the first, two writers ask at once (their
// calls run in parallel, Oslo's approved first), and each gets every
// forecast; the second resumes the session. The session pairs its calls,
// records the approval once, the tools' update in its deps, and the key
// given to the process is in none of the store's files.
func TestRun(t *testing.T) {
	for _, name := range []string{"chat", "responses", "anthropic", "gemini"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("WEATHER_API_KEY", "sk-quickstart-secret")
			dir := t.TempDir()
			var runs []string
			for range 2 {
				a, err := newAPI(name)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := run(context.Background(), a, dir, &out); err != nil {
					t.Fatalf("%v; the output was:\n%s", err, out.String())
				}
				a.close()
				runs = append(runs, out.String())
			}
			for _, want := range []string{`"weather-demo": resumed false`, "approved: {\"city\":\"Oslo\"}",
				"[alice] > What's the weather in Paris and in Rome?: ", "[bob] > And in Oslo?: ", "Paris: 18°C, sunny", "Oslo: -2°C, snow"} {
				if !strings.Contains(runs[0], want) {
					t.Errorf("the first run does not say %q:\n%s", want, runs[0])
				}
			}
			if want := "[alice] > And in Lisbon?: Lisbon: 21°C, windy."; !strings.Contains(runs[1], want) || !strings.Contains(runs[1], "resumed true") {
				t.Errorf("the second run does not say %q:\n%s", want, runs[1])
			}
			checkStored(t, dir)
		})
	}
}

// checkStored checks the session the runs left in dir.
func checkStored(t *testing.T, dir string) {
	t.Helper()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := nous.LoadByName(context.Background(), s, "weather-demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckToolPairing(); err != nil {
		t.Error(err)
	}
	decisions, compactions := 0, 0
	for e := range c.Log().All() {
		switch e.Type {
		case nous.EventApprovalDecision:
			decisions++
		case nous.EventReplace:
			compactions++
		}
	}
	if compactions == 0 {
		t.Error("the session was never compacted")
	}
	if checked, _ := c.Deps["cities_checked"].([]any); decisions != 1 || len(checked) != 4 {
		t.Errorf("%d decisions, cities checked %v: want one, and the four cities", decisions, c.Deps["cities_checked"])
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte("sk-quickstart-secret")) {
			t.Errorf("%s holds the key", path)
		}
		return err
	})
}

// The run is traced through the global tracer provider: turns, model
// calls and tool calls, every span ended, every one but the turns in a
// turn, and the key in no attribute.
func TestTrace(t *testing.T) {
	t.Setenv("WEATHER_API_KEY", "sk-quickstart-secret")
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	a, err := newAPI("chat")
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	var out bytes.Buffer
	if err := run(context.Background(), a, t.TempDir(), &out); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range rec.Ended() {
		count[s.Name()]++
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), "sk-quickstart-secret") {
				t.Errorf("%s: %s holds the key", s.Name(), kv.Key)
			}
		}
		if s.Name() != "invoke_agent weather" && !s.Parent().IsValid() {
			t.Errorf("%s is not in a turn", s.Name())
		}
	}
	if count["invoke_agent weather"] == 0 || count["chat gpt-5.4-mini"] < 2 || count["execute_tool get_weather"] < 3 {
		t.Errorf("spans %v", count)
	}
}

// The glue stays within 30 lines, and the README says how many it is.
func TestGlueLines(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	glue := regexp.MustCompile(`(?s)// glue:begin\n(.*)// glue:end`).FindSubmatch(src)
	if glue == nil {
		t.Fatal("main.go has no glue:begin ... glue:end")
	}
	n := 0
	for line := range strings.Lines(string(glue[1])) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "//") {
			n++
		}
	}
	if n > 30 {
		t.Errorf("the glue is %d lines, more than 30", n)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := regexp.MustCompile(`is (\d+) lines of\s+glue`).FindSubmatch(readme); want == nil || string(want[1]) != strconv.Itoa(n) {
		t.Errorf("the glue is %d lines; the README says %q", n, want)
	}
}

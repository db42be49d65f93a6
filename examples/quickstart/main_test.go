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

	"github.com/nous-go/nous/provider/openai/openaitest"
)

// Two runs: the first starts the session, calls two tools at once and
// compacts; the second resumes it. The key given to the process is never
// written to the store's files.
func TestRun(t *testing.T) {
	t.Setenv("WEATHER_API_KEY", "sk-quickstart-secret")
	dir := t.TempDir()
	var runs []string
	for range 2 {
		model := openaitest.NewServerFunc(fakeModel)
		var out bytes.Buffer
		if err := run(context.Background(), model.Client(), dir, &out); err != nil {
			t.Fatalf("%v; the output was:\n%s", err, out.String())
		}
		model.Close()
		runs = append(runs, out.String())
	}
	for _, want := range []string{`"weather-demo": resumed false`, "calls 2 tools at once", "Paris: 18°C, sunny; Rome: 24°C, clear.", "compacted into a summary", "Oslo: -2°C, snow."} {
		if !strings.Contains(runs[0], want) {
			t.Errorf("the first run does not say %q:\n%s", want, runs[0])
		}
	}
	for _, want := range []string{`"weather-demo": resumed true`, "Lisbon: 21°C, windy."} {
		if !strings.Contains(runs[1], want) {
			t.Errorf("the second run does not say %q:\n%s", want, runs[1])
		}
	}
	files := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte("sk-quickstart-secret")) {
			t.Errorf("%s holds the key", path)
		}
		return err
	})
	if files == 0 {
		t.Error("the store wrote no file")
	}
}

// The run is traced through the global tracer provider: a turn per
// question, a chat span per model call (the summarizer's too), an
// execute_tool span per city, and the key in no attribute.
func TestTrace(t *testing.T) {
	t.Setenv("WEATHER_API_KEY", "sk-quickstart-secret")
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	model := openaitest.NewServerFunc(fakeModel)
	defer model.Close()
	var out bytes.Buffer
	if err := run(context.Background(), model.Client(), t.TempDir(), &out); err != nil {
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
	// "chat" is the compaction's summary: a model call whose step names
	// no model.
	want := map[string]int{"invoke_agent weather": 2, "chat gpt-5.4-mini": 4, "chat": 1, "execute_tool get_weather": 3}
	if len(count) != len(want) || len(rec.Started()) != len(rec.Ended()) {
		t.Errorf("spans %v (%d started), want %v", count, len(rec.Started()), want)
	}
	for name, n := range want {
		if count[name] != n {
			t.Errorf("%d spans %q, want %d", count[name], name, n)
		}
	}
}

// The glue stays within 60 lines, and the README says how many it is.
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
	if n > 60 {
		t.Errorf("the glue is %d lines, more than 60", n)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := regexp.MustCompile(`is (\d+) lines of\s+glue`).FindSubmatch(readme); want == nil || string(want[1]) != strconv.Itoa(n) {
		t.Errorf("the glue is %d lines; the README says %q", n, want)
	}
}

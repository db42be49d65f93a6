package openai_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

type weatherArgs struct {
	City  string `json:"city" description:"the city's name"`
	Units string `json:"units,omitempty" enum:"c,f"`
}

// A nous.Tool is sent to Chat Completions as a function and to the
// Responses API as a function tool, strict off; one without parameters
// takes none; an invalid one is refused.
func TestTools(t *testing.T) {
	weather, err := nous.NewTool("get_weather", "The weather in a city.", weatherArgs{})
	if err != nil {
		t.Fatal(err)
	}
	clock := nous.Tool{Name: "clock"}
	schema := `{"type":"object","properties":{"city":{"description":"the city's name","type":"string"},"units":{"enum":["c","f"],"type":"string"}},"required":["city"],"additionalProperties":false}`
	chat, err := nousopenai.ChatTools(weather, clock)
	if err != nil {
		t.Fatal(err)
	}
	check(t, chat, `[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.","parameters":`+schema+`}},
		{"type":"function","function":{"name":"clock","parameters":{"type":"object","properties":{}}}}]`)
	resp, err := nousopenai.ResponsesTools(weather, clock)
	if err != nil {
		t.Fatal(err)
	}
	check(t, resp, `[{"type":"function","name":"get_weather","description":"The weather in a city.","strict":false,"parameters":`+schema+`},
		{"type":"function","name":"clock","strict":false,"parameters":{"type":"object","properties":{}}}]`)
	if _, err := nousopenai.ChatTools(nous.Tool{Name: "no spaces"}); !errors.Is(err, nous.ErrInvalidTool) {
		t.Fatalf("an invalid tool: %v", err)
	}
	if _, err := nousopenai.ResponsesTools(nous.Tool{Name: "t", Parameters: json.RawMessage(`[]`)}); !errors.Is(err, nous.ErrInvalidTool) {
		t.Fatalf("an invalid tool: %v", err)
	}
}

// check fails unless v marshals to the JSON value want.
func check(t *testing.T, v any, want string) {
	t.Helper()
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !adapttest.SameJSON(t, got, []byte(want)) {
		t.Fatalf("tools sent as\n%s\nwant\n%s", got, want)
	}
}

package gemini_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

type weatherArgs struct {
	City  string `json:"city" description:"the city's name"`
	Units string `json:"units,omitempty" enum:"c,f"`
}

// nous.Tools are sent as one tool of function declarations, each with the
// JSON Schema of its parameters; none for no tools; an invalid one is
// refused.
func TestTools(t *testing.T) {
	weather, err := nous.NewTool("get_weather", "The weather in a city.", weatherArgs{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := nousgemini.Tools(weather, nous.Tool{Name: "clock"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"functionDeclarations":[
		{"name":"get_weather","description":"The weather in a city.","parametersJsonSchema":{"type":"object","properties":{"city":{"description":"the city's name","type":"string"},"units":{"enum":["c","f"],"type":"string"}},"required":["city"],"additionalProperties":false}},
		{"name":"clock","parametersJsonSchema":{"type":"object","properties":{}}}]}]`
	if !adapttest.SameJSON(t, got, []byte(want)) {
		t.Fatalf("tools sent as\n%s\nwant\n%s", got, want)
	}
	if none, err := nousgemini.Tools(); none != nil || err != nil {
		t.Fatalf("no tools: %v, %v", none, err)
	}
	if _, err := nousgemini.Tools(nous.Tool{Name: "no spaces"}); !errors.Is(err, nous.ErrInvalidTool) {
		t.Fatalf("an invalid tool: %v", err)
	}
}

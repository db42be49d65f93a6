package anthropic_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

type weatherArgs struct {
	City  string `json:"city" description:"the city's name"`
	Units string `json:"units,omitempty" enum:"c,f"`
}

// A nous.Tool is sent as a custom tool with its name, description and
// input schema, the schema's other keywords kept; one without parameters
// takes none; an invalid one is refused.
func TestTools(t *testing.T) {
	weather, err := nous.NewTool("get_weather", "The weather in a city.", weatherArgs{})
	if err != nil {
		t.Fatal(err)
	}
	clock := nous.Tool{Name: "clock"}
	params, err := nousanthropic.Tools(weather, clock)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"get_weather","description":"The weather in a city.","input_schema":{"type":"object","properties":{"city":{"description":"the city's name","type":"string"},"units":{"enum":["c","f"],"type":"string"}},"required":["city"],"additionalProperties":false}},
		{"name":"clock","input_schema":{"type":"object","properties":{}}}]`
	if !sameJSON(t, got, []byte(want)) {
		t.Fatalf("tools sent as\n%s\nwant\n%s", got, want)
	}
	if _, err := nousanthropic.Tools(nous.Tool{Name: "no spaces"}); !errors.Is(err, nous.ErrInvalidTool) {
		t.Fatalf("an invalid tool: %v", err)
	}
}

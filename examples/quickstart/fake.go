package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	"github.com/nous-go/nous/provider/anthropic/anthropictest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	"github.com/nous-go/nous/provider/gemini/geminitest"
	nousopenai "github.com/nous-go/nous/provider/openai"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

// api is a model behind one API and its summarizer, with the fake server
// both talk to; a real agent makes its SDK's client and keeps the rest.
type api struct {
	model      nous.Model
	summarizer nous.Summarizer
	close      func()
}

// newAPI returns the API of that name (chat, responses, anthropic or
// gemini) on a fake server that plays the model.
func newAPI(name string) (api, error) {
	switch name {
	case "chat":
		s := openaitest.NewServerFunc(func(n int, req []byte) openaitest.Reply {
			r := play(n, req)
			return openaitest.Reply{Text: r.text, ToolCalls: r.calls, Usage: r.usage}
		})
		params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_4Mini}
		return api{nousopenai.NewChatModel(s.Client(), params), nousopenai.NewChatSummarizer(s.Client(), params), s.Close}, nil
	case "responses":
		s := openaitest.NewServerFunc(func(n int, req []byte) openaitest.Reply {
			r := play(n, req)
			return openaitest.Reply{Text: r.text, ToolCalls: r.calls, Usage: r.usage}
		})
		params := responses.ResponseNewParams{Model: openai.ChatModelGPT5_4Mini}
		return api{nousopenai.NewResponsesModel(s.Client(), params), nousopenai.NewResponsesSummarizer(s.Client(), params), s.Close}, nil
	case "anthropic":
		s := anthropictest.NewServerFunc(func(n int, req []byte) anthropictest.Reply {
			r := play(n, req)
			return anthropictest.Reply{Text: r.text, ToolCalls: r.calls, Usage: r.usage}
		})
		params := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024}
		return api{nousanthropic.NewModel(s.Client(), params), nousanthropic.NewSummarizer(s.Client(), params), s.Close}, nil
	case "gemini":
		s := geminitest.NewServerFunc(func(n int, req []byte) geminitest.Reply {
			r := play(n, req)
			return geminitest.Reply{Text: r.text, ToolCalls: r.calls, Usage: r.usage}
		})
		c, err := s.Client(context.Background())
		if err != nil {
			return api{}, err
		}
		params := nousgemini.Params{Model: "gemini-2.5-flash"}
		return api{nousgemini.NewModel(c, params), nousgemini.NewSummarizer(c, params), s.Close}, nil
	}
	return api{}, fmt.Errorf("no API %q: chat, responses, anthropic or gemini", name)
}

// reply is what the fake model answers.
type reply struct {
	text  string
	calls []nous.ToolCall
	usage nous.Usage
}

// play plays the model from the n-th request it is sent, whatever the
// API: a request with no tools is the summarizer's; to the questions the
// conversation has not answered (a city without its forecast after it),
// one call per city whose forecast is not there yet, or, once every one
// is, the forecasts in a sentence.
func play(n int, request []byte) reply {
	body := unescape(string(request))
	usage := nous.Usage{InputTokens: len(request) / 4, OutputTokens: 20}
	if !strings.Contains(body, "get_weather") {
		return reply{text: "Summary: " + strings.Join(cities.FindAllString(body, -1), ", ") + " were looked up.", usage: usage}
	}
	var results []string
	var calls []nous.ToolCall
	for _, q := range []string{"What's the weather in Paris and in Rome?", "And in Oslo?", "And in Lisbon?"} {
		at := strings.LastIndex(body, q)
		if at < 0 {
			continue
		}
		for _, city := range cities.FindAllString(q, -1) {
			result := city + ": " + forecasts[city]
			switch strings.Count(body[at:], result) {
			case 0: // not looked up since the question
				args, _ := json.Marshal(weatherArgs{City: city})
				calls = append(calls, nous.ToolCall{ID: fmt.Sprintf("call_%d_%d", n, len(calls)), Name: "get_weather", Arguments: args})
			case 1: // the tool's result, which no reply has given yet
				results = append(results, result)
			}
		}
	}
	if len(calls) > 0 {
		return reply{calls: calls, usage: usage}
	}
	if len(results) == 0 {
		return reply{text: "Ask me about a city's weather.", usage: usage}
	}
	return reply{text: strings.Join(results, "; ") + ".", usage: usage}
}

// unescape undoes what JSON encoders may escape in the fake's strings.
func unescape(s string) string {
	return strings.NewReplacer(`\u00b0`, "°", `\u0027`, "'", `\u0026`, "&").Replace(s)
}

var cities = regexp.MustCompile(`Paris|Rome|Oslo|Lisbon`)

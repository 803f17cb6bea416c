package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// shorthandCatalogue holds the right tool of each request below, a clock,
// and tools that share the requests' other words.
var shorthandCatalogue = []toolsearch.Doc{
	{Key: "search_images", Name: "search_images", Description: "Search for images by keyword.", Backend: "media"},
	{Key: "send_message", Name: "send_message", Description: "Send a message to a channel.", Backend: "slack"},
	{Key: "get_weather_forecast", Name: "get_weather_forecast", Description: "Get the weather forecast for a city.", Backend: "weather"},
	{Key: "get_current_time", Name: "get_current_time", Description: "Get the current date and time.", Backend: "clock"},
	{Key: "list_channels", Name: "list_channels", Description: "List the team's channels.", Backend: "slack"},
	{Key: "get-historical-analysis", Name: "get-historical-analysis", Description: "Get historical price analysis of a cryptocurrency.", Backend: "crypto"},
	{Key: "get_price_history", Name: "get_price_history", Description: "Get the daily price history of a stock.", Backend: "stocks"},
	{Key: "dog_breeds", Name: "dog_breeds", Description: "List dog breeds.", Backend: "pets"},
}

// TestChatShorthandFoundNothing: a request in chat shorthand ("pics",
// "msg", "temp", "tmrw") or naming a coin ("solana") found another request
// word's tool or nothing,
// and "tmrw" implied no date. Each now finds its tool first, and "tmrw"
// brings the clock into the first hits as "tomorrow" does.
func TestChatShorthandFoundNothing(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build(shorthandCatalogue)
	wantFirst(t, ix, 4, map[string]string{
		"find pics of Oslo":                         "search_images",
		"msg the team channel":                      "send_message",
		"temp in Oslo tmrw?":                        "get_weather_forecast",
		"TMRW wx for Oslo pls":                      "get_weather_forecast",
		"how has solana done over the last 30 days": "get-historical-analysis",
	})
	for _, q := range []string{"temp in Oslo tmrw?", "TMRW wx for Oslo pls"} {
		if got := keys(ix.Search(q, 4, nil)); !slices.Contains(got, "get_current_time") {
			t.Errorf("%q → %v: tomorrow's date needs the clock", q, got)
		}
	}
}

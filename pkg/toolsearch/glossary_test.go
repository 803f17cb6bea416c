package toolsearch_test

import (
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// TestChineseDescribedToolFoundByNoEnglishRequest: a tool described only
// in Chinese shared no word with an English request, nor an English tool
// with a Chinese request (61 of LiveMCPBench's 527 tools are described in
// Chinese). Through the glossary, each finds the other.
func TestChineseDescribedToolFoundByNoEnglishRequest(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "get-douyin-trending", Name: "get-douyin-trending", Description: "获取抖音热搜榜单，展示当下最热门的社会话题", Backend: "trends"},
		{Key: "mcp_howtocook_whatToEat", Name: "mcp_howtocook_whatToEat", Description: "不知道吃什么？根据人数直接推荐适合的菜品组合", Backend: "howtocook"},
		{Key: "get_weather_by_city", Name: "get_weather_by_city", Description: "Get weather for a city by name.", Backend: "weather"},
		{Key: "list_events", Name: "list_events", Description: "List the events of a calendar.", Backend: "calendar"},
		{Key: "get_ticker_news", Name: "get_ticker_news", Description: "Get the latest news of a stock ticker.", Backend: "finance"},
	})
	wantFirst(t, ix, 3, map[string]string{
		"what's trending on tiktok today":       "get-douyin-trending",
		"recommend a dish for dinner for three": "mcp_howtocook_whatToEat",
		"北京明天天气怎么样":                             "get_weather_by_city",
	})
}

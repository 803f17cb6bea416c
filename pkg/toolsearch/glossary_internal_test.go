package toolsearch

import "testing"

// TestGlossaryReadTheShorterWord pins how a Chinese text is glossed: the
// longest glossary word at each place ("天气预报" is a forecast, not
// "weather" and nothing), other text left as it is, and a text with no
// Chinese returned unchanged.
func TestGlossaryReadTheShorterWord(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{
		"明天天气预报":             "明天天气预报 · tomorrow weather forecast",
		"获取 BBC 新闻":          "获取 BBC 新闻 · get news",
		"plain English text": "plain English text",
		"東京":                 "東京",
	} {
		if got := glossed(s); got != want {
			t.Errorf("glossed(%q) = %q, want %q", s, got, want)
		}
	}
}

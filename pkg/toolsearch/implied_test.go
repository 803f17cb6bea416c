package toolsearch_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// A request that says where to save its result ("save it in
// /root/markdown/x.md") but never says "write a file" found no file
// writer among LiveMCPBench's 527 tools: its words went to tools that save
// other things (presentations, PDFs); nor did one that creates its result
// at a path. A path to read implies no write.
func TestSaveToAPathFoundNoFileWriter(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	for _, q := range []string{
		"Generate a deep report of bitcoin and save it in /root/markdown/bitcoin.md",
		"Help me write a quick start tutorial for Ant Design in markdown at /root/markdown/antd_tutorial.md.",
		"Read the papers webarena and mind2web, then create a comparison report in /root/markdown/compare.md",
	} {
		if got := keys(ix.Search(q, 5, nil)); !slices.Contains(got, "write_file") {
			t.Errorf("Search(%q) = %v, want write_file among the first 5", q, got)
		}
	}
	q := "What files are in my /root/music folder?"
	if got := keys(ix.Search(q, 5, nil)); slices.Contains(got, "write_file") {
		t.Errorf("Search(%q) = %v: a path to read implied a write", q, got)
	}
}

// A request for a report or document at a text file's path ("give me a
// markdown report on /root/x.md", "generate a report at /root/x.md") that
// never says save or write found no file writer: its words went to the
// tools of its subject. A report read from a path implies no write.
func TestReportAtATextPathFoundNoFileWriter(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	for _, q := range []string{
		"Run a full reconnaissance on www.baidu.com. Give me a markdown report on /root/markdown/baidu_report.md with whois information and sitemap.",
		"Find today's LeetCode Daily Challenge and generate a detailed markdown document in /root/markdown/leetcode_daily.md.",
		"Summarize this week's npm download numbers for react and vue as a report in ~/reports/npm.txt",
	} {
		if got := keys(ix.Search(q, 5, nil)); !slices.Contains(got, "write_file") {
			t.Errorf("Search(%q) = %v, want write_file among the first 5", q, got)
		}
	}
	q := "Summarize the report in /root/pdf/annual_report.pdf"
	if got := keys(ix.Search(q, 5, nil)); slices.Contains(got, "write_file") {
		t.Errorf("Search(%q) = %v: a report to read implied a write", q, got)
	}
}

// A request to work on a PDF at a path ("summarize the PDF at
// /home/sam/lease.pdf") found tools for its verb (Wikipedia's summaries)
// and PDF tools that split or merge, never one that reads a PDF.
func TestSummarizeAPdfAtAPathFoundNoReader(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	for _, q := range []string{
		"Can you summarize the PDF at /home/sam/Documents/lease_2024.pdf?",
		"explain the main argument of ~/papers/attention.pdf",
	} {
		got := keys(ix.Search(q, 3, nil))
		if !slices.Contains(got, "read_pdf") && !slices.Contains(got, "document_reader") {
			t.Errorf("Search(%q) = %v, want read_pdf or document_reader among the first 3", q, got)
		}
	}
}

// TestRelativeDateFoundNoCurrentDateTool: "tomorrow" needs today's date,
// which the agent does not know, but the request's words found only the
// tools it names (here hotels), never a clock. The clock now takes the
// fourth place, after the first three hits of the request's own words; a
// request with no relative date does not get it.
func TestRelativeDateFoundNoCurrentDateTool(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{{Key: "get_current_time", Name: "get_current_time", Description: "Get the current date and time in a timezone.", Backend: "clock"}}
	for _, n := range []string{"search_hotels", "hotel_details", "hotel_reviews", "book_hotel", "cancel_hotel_booking", "hotel_photos"} {
		docs = append(docs, toolsearch.Doc{Key: n, Name: n, Description: "Hotels in a city: " + n, Backend: "stays"})
	}
	ix := toolsearch.Build(docs)
	got := keys(ix.Search("find a hotel in Paris for tomorrow, two nights", 5, nil))
	if len(got) != 5 || got[3] != "get_current_time" {
		t.Errorf("Search(tomorrow) = %v, want get_current_time fourth", got)
	}
	if got := keys(ix.Search("find a hotel in Paris, two nights", 5, nil)); slices.Contains(got, "get_current_time") {
		t.Errorf("Search(no date) = %v, want no clock", got)
	}
	hidden := func(d int) bool { return docs[d].Key != "get_current_time" }
	if got := keys(ix.Search("find a hotel in Paris for tomorrow", 5, hidden)); slices.Contains(got, "get_current_time") {
		t.Errorf("Search(tomorrow, clock hidden) = %v", got)
	}
}

// TestRelativeDateBroughtAnotherServersDateTool: a relative date is the
// user's, so it needs a clock for the user's timezone; the aside's step
// ("current date time") took a train server's own date tool, fixed to one
// timezone and meant for its ticket queries, over the general clock.
func TestRelativeDateBroughtAnotherServersDateTool(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "get_current_time", Name: "get_current_time", Description: "Get current time in a specific timezones",
			Params: []toolsearch.Param{{Name: "timezone", Description: "IANA timezone name"}}, Backend: "time"},
		{Key: "get-current-date", Name: "get-current-date", Description: "Get the current date in the Asia/Shanghai time zone as yyyy-MM-dd, for relative dates (tomorrow, next Wednesday) of the ticket tools.", Backend: "trains"},
		{Key: "get-tickets", Name: "get-tickets", Description: "Train tickets between two stations on a date.", Backend: "trains"},
	}
	for _, n := range []string{"search_hotels", "hotel_details", "hotel_reviews", "book_hotel", "hotel_photos"} {
		docs = append(docs, toolsearch.Doc{Key: n, Name: n, Description: "Hotels in a city: " + n, Backend: "stays"})
	}
	ix := toolsearch.Build(docs)
	got := keys(ix.Search("find a hotel in Paris for tomorrow, two nights", 5, nil))
	if len(got) != 5 || got[3] != "get_current_time" {
		t.Errorf("Search(tomorrow) = %v, want get_current_time fourth", got)
	}
}

// TestTourFoundNoPlaces: a tour or an itinerary needs places to visit,
// which "a two-day tour of Beijing based on the weather" never names; its
// words found weather tools and maps only.
func TestTourFoundNoPlaces(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{{Key: "find_nearby_places", Name: "find_nearby_places", Description: "Discover points of interest and attractions near a location.", Backend: "osm"}}
	for _, n := range []string{"get_weather", "get_weather_by_city", "weather_alerts", "weather_history", "generate_district_map", "generate_city_map"} {
		docs = append(docs, toolsearch.Doc{Key: n, Name: n, Description: "Weather and maps of a city or district: " + n, Backend: "weather"})
	}
	ix := toolsearch.Build(docs)
	for _, q := range []string{"Give me a two-day tour of Beijing based on the recent weather", "plan an itinerary for Lisbon depending on the weather"} {
		if got := keys(ix.Search(q, 5, nil)); !slices.Contains(got, "find_nearby_places") {
			t.Errorf("Search(%q) = %v, want find_nearby_places among the first 5", q, got)
		}
	}
}

// TestSaveToAnOfficeFileFoundNoCreator: a request that saves its result
// to a .docx (or .pptx, .xlsx) path needs that format's tool to create the
// document, which its words never name; they found only tools for their
// own words and a plain file writer.
func TestSaveToAnOfficeFileFoundNoCreator(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "create_document", Name: "create_document", Description: "Create a new Word document with optional metadata.", Backend: "word"},
		{Key: "write_file", Name: "write_file", Description: "Write text to a file.", Backend: "fs"},
		{Key: "save_file", Name: "save_file", Description: "Save a file.", Backend: "fs2"},
		{Key: "docx_to_pdf", Name: "docx_to_pdf", Description: "Convert a docx file to pdf.", Backend: "convert"},
		{Key: "docx_info", Name: "docx_info", Description: "Information on a docx file.", Backend: "convert"},
	}
	for i := range 6 {
		n := fmt.Sprintf("news_%d", i)
		docs = append(docs, toolsearch.Doc{Key: n, Name: n, Description: "Today's news headlines and summaries.", Backend: n})
	}
	ix := toolsearch.Build(docs)
	if got := keys(ix.Search("Summarize today's news and save it to /root/word/news.docx", 5, nil)); !slices.Contains(got, "create_document") {
		t.Errorf("Search(save to .docx) = %v, want create_document among the first 5", got)
	}
}

// TestWhatsInAFolderFoundToolsOfItsName: asking what a folder holds needs
// it listed, which "what's in my Downloads folder?" never says; its name
// found the tools that download.
func TestWhatsInAFolderFoundToolsOfItsName(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "list_directory", Name: "list_directory", Description: "Get a detailed listing of all files and directories in a specified path.", Backend: "fs"},
		{Key: "read_file", Name: "read_file", Description: "Read the complete contents of a file.", Backend: "fs"},
		{Key: "download_from_url", Name: "download_from_url", Description: "Download a file from a URL into a folder.", Backend: "dl"},
		{Key: "download_paper", Name: "download_paper", Description: "Download a paper's PDF to the downloads folder.", Backend: "papers"},
		{Key: "download_video", Name: "download_video", Description: "Download a video.", Backend: "video"},
	}
	ix := toolsearch.Build(docs)
	for _, q := range []string{"what's in my Downloads folder?", "what is inside the 'downloads' directory"} {
		if got := keys(ix.Search(q, 2, nil)); !slices.Contains(got, "list_directory") {
			t.Errorf("Search(%q) = %v, want list_directory among the first 2", q, got)
		}
	}
}

// TestRelativePathFoundNoWriter: a save cue needed an absolute path, so
// "create notes/todo.txt containing …" implied no file written and found
// tools that create other things.
func TestRelativePathFoundNoWriter(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "write_file", Name: "write_file", Description: "Write content to a file, replacing it if it exists.", Backend: "fs"},
		{Key: "create_container", Name: "create_container", Description: "Create a new container from an image.", Backend: "docker"},
		{Key: "create_project", Name: "create_project", Description: "Create a new notes project.", Backend: "notes"},
		{Key: "create_table", Name: "create_table", Description: "Create a table in a sheet.", Backend: "excel"},
		{Key: "renew_summoner", Name: "renew_summoner", Description: "Renew a summoner's data.", Backend: "lol"},
	}
	ix := toolsearch.Build(docs)
	for _, q := range []string{"Create notes/todo.txt containing: buy milk, renew passport, call mom", "save this as ./out/summary.md"} {
		if got := keys(ix.Search(q, 2, nil)); !slices.Contains(got, "write_file") {
			t.Errorf("Search(%q) = %v, want write_file among the first 2", q, got)
		}
	}
}

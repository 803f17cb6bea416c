package status

import (
	"fmt"
	"html/template"
	"time"
)

// funcs are the page's helpers: when formats a time in UTC (RFC 3339,
// "-" for none), age how long before the report a time was, dur a count
// of seconds ("1h 02m", "3m 04s", "5s").
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	},
	"age": func(now, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return Duration(int64(now.Sub(t).Seconds())) + " ago"
	},
	"dur": Duration,
}

// Duration formats n seconds for a person: "1d 02h", "1h 02m", "3m 04s", "5s".
func Duration(n int64) string {
	d := time.Duration(max(n, 0)) * time.Second
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd %02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%dh %02dm", d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %02ds", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// page is the HTML status page. Every backend row carries data-backend and
// data-state attributes (and the state cell class "state"), so scripts and
// tests can read it without parsing the layout. It reloads itself every 10s.
var page = template.Must(template.New("status").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="10">
<title>{{.Name}} status</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.ready { color: #146c2e; font-weight: bold; }
.down { color: #b00020; font-weight: bold; }
.connecting { color: #8a6d00; font-weight: bold; }
.error { font-family: monospace; font-size: .9em; max-width: 40em; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>{{.Name}} <small>vmcp {{.Version}}</small></h1>
<p id="ready" data-ready="{{.Ready}}">{{if .Ready}}Ready since <time data-ready-since>{{when .ReadySince}}</time> ({{age .Time .ReadySince}}){{else}}Not ready{{end}}.
Page rendered at <time id="rendered">{{when .Time}}</time>.</p>
<p id="process">Started <time data-started>{{when .Started}}</time>, up <span data-uptime="{{.UptimeSeconds}}">{{dur .UptimeSeconds}}</span>{{if .Config}}; config <code id="config">{{.Config}}</code>{{end}}.</p>
<p id="rates" data-requests="{{printf "%.2f" .Rates.RequestsPerSecond}}" data-errors="{{printf "%.2f" .Rates.ErrorsPerSecond}}">Last minute: {{printf "%.2f" .Rates.RequestsPerSecond}} requests/s, {{printf "%.2f" .Rates.ErrorsPerSecond}} errors/s (over {{printf "%.0f" .Rates.WindowSeconds}} s).</p>

<h2>Backends</h2>
<table id="backends">
<thead><tr><th>Backend</th><th>Transport</th><th>Revision</th><th>State</th><th>Since</th><th>Restarts</th><th>Tools</th><th>Prompts</th><th>Resources</th><th>Last error</th></tr></thead>
<tbody>
{{- $now := .Time}}
{{- range .Backends}}
<tr class="backend" data-backend="{{.Name}}" data-state="{{.State}}" data-restarts="{{.Restarts}}">
<td class="name">{{.Name}}</td><td>{{.Transport}}{{with .Outbound}}<br><small class="outbound">auth {{.String}}</small>{{end}}</td><td>{{.Revision}}</td>
<td class="state {{.State}}">{{.State}}</td><td class="since">{{when .Since}}<br><small>{{age $now .Since}}</small></td>
<td class="restarts">{{.Restarts}}{{if .Restarts}}<br><small>last {{age $now .LastRestart}}</small>{{end}}</td>
<td>{{.Tools}}</td><td>{{.Prompts}}</td><td>{{.Resources}}</td>
<td class="error">{{.LastError}}{{if .LastError}}<br><small class="error-at">{{when .LastErrorAt}} ({{age $now .LastErrorAt}})</small>{{end}}</td>
</tr>
{{- end}}
</tbody>
</table>

<h2>Sessions</h2>
<table id="sessions">
<tr><th>Legacy client sessions</th><td data-count="legacy">{{.Sessions.Legacy}}</td></tr>
<tr><th>Modern listen streams</th><td data-count="listens">{{.Sessions.ModernListens}}</td></tr>
<tr><th>Parked MRTR calls</th><td data-count="parked">{{.Sessions.ParkedCalls}}</td></tr>
</table>
{{- if .Sessions.List}}
<h3>Legacy sessions (newest {{len .Sessions.List}} of {{.Sessions.Legacy}})</h3>
<table id="session-list">
<thead><tr><th>Session</th><th>Client</th><th>Revision</th><th>Principal</th><th>Age</th><th>Idle</th><th>Backend sessions</th></tr></thead>
<tbody>{{range .Sessions.List}}<tr class="session" data-session="{{.ID}}"><td><code>{{.ID}}…</code></td><td>{{.Client}} {{.ClientVersion}}</td><td>{{.Revision}}</td>
<td class="principal">{{.Principal}}</td><td>{{dur .AgeSeconds}}</td><td>{{dur .IdleSeconds}}</td><td class="backend-sessions">{{.BackendSessions}}</td></tr>{{end}}</tbody>
</table>
{{- end}}

<h2>Catalogue</h2>
<table id="catalogue">
<tr><th>Tools</th><td data-count="tools">{{.Catalogue.Tools}}</td></tr>
<tr><th>Prompts</th><td data-count="prompts">{{.Catalogue.Prompts}}</td></tr>
<tr><th>Resources</th><td data-count="resources">{{.Catalogue.Resources}}</td></tr>
<tr><th>Resource templates</th><td data-count="templates">{{.Catalogue.Templates}}</td></tr>
</table>
{{- if .Catalogue.Withheld}}
<h3>Withheld</h3>
<ul id="withheld">{{range .Catalogue.Withheld}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
{{- if .Catalogue.Conflicts}}
<h3>Conflicts resolved by order</h3>
<table id="conflicts">
<thead><tr><th>Kind</th><th>Key</th><th>Kept from</th><th>Not advertised from</th></tr></thead>
<tbody>{{range .Catalogue.Conflicts}}<tr><td>{{.Kind}}</td><td>{{.Key}}</td><td>{{.Winner}}</td><td>{{.Loser}}</td></tr>{{end}}</tbody>
</table>
{{- end}}
{{- if .Catalogue.ToolChanges}}
<h3>Changed tool definitions</h3>
<table id="tool-changes">
<thead><tr><th>Backend</th><th>Tool</th><th>Outcome</th><th>Since</th><th>Pinned</th><th>Offered</th></tr></thead>
<tbody>{{range .Catalogue.ToolChanges}}<tr class="tool-change" data-outcome="{{.Outcome}}"><td>{{.Backend}}</td><td>{{.Tool}}</td><td>{{.Outcome}}</td>
<td>{{.Since.Format "2006-01-02 15:04:05 MST"}}</td><td><code>{{printf "%.12s" .Pinned}}</code></td><td><code>{{.Offered}}</code></td></tr>{{end}}</tbody>
</table>
<p><small>Accept one: <code>vmcp accept-tool-change --offered OFFERED BACKEND TOOL</code>, or name it in <code>security.accept_tool_changes</code> (<code>{backend: BACKEND, tool: TOOL, offered: OFFERED}</code>) and reload.</small></p>
{{- end}}
{{- if .Reloads}}
<h2>Recent reloads</h2>
<table id="reloads">
<thead><tr><th>Time</th><th>Source</th><th>Outcome</th><th>Added</th><th>Removed</th><th>Changed</th><th>Problems</th></tr></thead>
<tbody>{{range .Reloads}}<tr class="reload" data-outcome="{{.Outcome}}"><td>{{.Time.Format "2006-01-02 15:04:05 MST"}}</td><td>{{.Source}}</td><td class="outcome">{{.Outcome}}</td>
<td>{{range .Added}}{{.}} {{end}}</td><td>{{range .Removed}}{{.}} {{end}}</td><td>{{range .Changed}}{{.}} {{end}}{{range .Applied}}{{.}} {{end}}</td>
<td class="error">{{range .Errors}}{{.}}<br>{{end}}{{range .Ignored}}not applied: {{.}}<br>{{end}}</td></tr>{{end}}</tbody>
</table>
{{- end}}
<p><small>JSON: this URL with <code>Accept: application/json</code>; terminal: <code>vmcp status --url URL</code>.</small></p>
</body>
</html>
`))

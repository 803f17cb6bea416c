package status

import "html/template"

// page is the HTML status page. Every backend row carries data-backend and
// data-state attributes (and the state cell class "state"), so scripts and
// tests can read it without parsing the layout. It reloads itself every 10s.
var page = template.Must(template.New("status").Parse(`<!DOCTYPE html>
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
<p id="ready" data-ready="{{.Ready}}">{{if .Ready}}Ready{{else}}Not ready{{end}} (as of {{.Time.Format "2006-01-02 15:04:05 MST"}})</p>

<h2>Backends</h2>
<table id="backends">
<thead><tr><th>Backend</th><th>Transport</th><th>Revision</th><th>State</th><th>Tools</th><th>Prompts</th><th>Resources</th><th>Last error</th></tr></thead>
<tbody>
{{- range .Backends}}
<tr class="backend" data-backend="{{.Name}}" data-state="{{.State}}">
<td class="name">{{.Name}}</td><td>{{.Transport}}</td><td>{{.Revision}}</td>
<td class="state {{.State}}">{{.State}}</td><td>{{.Tools}}</td><td>{{.Prompts}}</td><td>{{.Resources}}</td>
<td class="error">{{.LastError}}</td>
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
{{- if .Reloads}}
<h2>Recent reloads</h2>
<table id="reloads">
<thead><tr><th>Time</th><th>Source</th><th>Outcome</th><th>Added</th><th>Removed</th><th>Changed</th><th>Problems</th></tr></thead>
<tbody>{{range .Reloads}}<tr class="reload" data-outcome="{{.Outcome}}"><td>{{.Time.Format "2006-01-02 15:04:05 MST"}}</td><td>{{.Source}}</td><td class="outcome">{{.Outcome}}</td>
<td>{{range .Added}}{{.}} {{end}}</td><td>{{range .Removed}}{{.}} {{end}}</td><td>{{range .Changed}}{{.}} {{end}}</td>
<td class="error">{{range .Errors}}{{.}}<br>{{end}}{{range .Ignored}}not applied: {{.}}<br>{{end}}</td></tr>{{end}}</tbody>
</table>
{{- end}}
<p><small>JSON: this URL with <code>Accept: application/json</code>; terminal: <code>vmcp status --url URL</code>.</small></p>
</body>
</html>
`))

package report

import (
	_ "embed"
	"html/template"
)

// The page: a template, a stylesheet and a script, all ours, embedded in
// the binary and inlined into every report.
var (
	//go:embed assets/report.html
	pageHTML string
	//go:embed assets/report.css
	pageCSS string
	//go:embed assets/report.js
	pageJS string
)

var page = template.Must(template.New("report").Parse(pageHTML))

// assets are the stylesheet and script a view carries into the page.
type assets struct {
	CSS template.CSS
	JS  template.JS
}

var inline = assets{CSS: template.CSS(pageCSS), JS: template.JS(pageJS)}

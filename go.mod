module github.com/acpscope/acpscope

go 1.26.8

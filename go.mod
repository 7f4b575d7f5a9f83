module github.com/git-ctx/git-ctx

go 1.26.8

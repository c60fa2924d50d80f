# bash completion for evprof. Commands and options are read from evprof's
# own help text, so completion follows whatever the installed binary takes.
_evprof()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]:-} words

	if [ "$COMP_CWORD" -eq 1 ]; then
		words="$(evprof --help 2>/dev/null |
			awk '/^commands:/ { on = 1; next } on && NF { print $1 }')
			help --version"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return
	fi
	if [ "$cmd" = help ]; then
		mapfile -t COMPREPLY < <(compgen -W "record report view stat info" -- "$cur")
		return
	fi
	case $cur in
	-*)
		words=$(evprof help "$cmd" 2>/dev/null |
			grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' | sort -u)
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		;;
	*)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	esac
}
complete -o filenames -F _evprof evprof

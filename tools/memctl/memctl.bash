# bash completion for memctl(1), the operator CLI of memd.
#
# Commands and options come from memctl's own --help (the memctl being completed, so a
# build tree's memctl completes its own commands): the completion cannot fall behind
# the program. Only option values are listed here.

# The commands memctl lists under "commands:" in its --help.
_memctl_commands()
{
    "$1" --help 2>/dev/null | awk '/^commands:/ { on = 1; next }
        on && /^  [a-z]/ { print $1 }'
}

# The options of one command (and model's subcommand) from its usage: every --word,
# and -o where the usage offers it.
_memctl_options()
{
    local prog=$1 cmd=$2 sub=$3 text
    if [[ $cmd == model && -n $sub ]]; then
        # model's usage lists every subcommand: keep the lines of this one.
        text=$("$prog" model "$sub" --help 2>/dev/null | awk -v want="model $sub " '
            index($0, "memctl model ") { on = index($0, want) > 0 }
            on')
    else
        text=$("$prog" "$cmd" --help 2>/dev/null)
    fi
    grep -oE -- '--[a-z][a-z-]*' <<<"$text" | sort -u
    [[ $text == *"[-o "* ]] && echo -o
}

_memctl()
{
    local cur prev words cword split
    _init_completion -s || return

    # The command (and model's subcommand): the first words that are not options;
    # --socket takes a value and may come anywhere.
    local i cmd="" sub=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --socket) ((i++)) ;;
            -*) ;;
            *)
                if [[ -z $cmd ]]; then
                    cmd=${words[i]}
                elif [[ $cmd == model && -z $sub ]]; then
                    sub=${words[i]}
                fi
                ;;
        esac
    done

    case $prev in
        --socket)
            _filedir
            return
            ;;
        --class)
            COMPREPLY=($(compgen -W 'code constant placeholder internal logging' -- "$cur"))
            return
            ;;
        --scope)
            COMPREPLY=($(compgen -W 'dram global sram l1 dram.texture' -- "$cur"))
            return
            ;;
        --group)
            COMPREPLY=($(compgen -W 'sram l1 dram global' -- "$cur"))
            return
            ;;
        --dtype)
            COMPREPLY=($(compgen -W 'u8 i8 u16 i16 f16 bf16 u32 i32 f32 u64 i64 f64' -- "$cur"))
            return
            ;;
        --mode)
            COMPREPLY=($(compgen -W 'uniform_per_core range_lockstep per_core' -- "$cur"))
            return
            ;;
        --report)
            COMPREPLY=($(compgen -W 'memory_usage_summary l1_usage_summary
                detailed_memory_usage' -- "$cur"))
            return
            ;;
        --output | -o | --html | --svg)
            _filedir
            return
            ;;
        --device | --at | --bank | --region | --size | --sizes | --shape | --page-size | --align | --banks | --bank-set | --cores | --name | --budget | --overlap | --window | \
            --budget-ms | --seed | --watch | --instances | --dims)
            return # a number or a name: nothing to offer
            ;;
    esac
    $split && return

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '--socket --all --help --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_memctl_commands "${words[0]}")" -- "$cur"))
        fi
        return
    fi
    if [[ $cmd == model && -z $sub && $cur != -* ]]; then
        COMPREPLY=($(compgen -W 'check load list import' -- "$cur"))
        return
    fi
    if [[ $cmd == subdev && $cword -le 2 && $cur != -* ]]; then
        COMPREPLY=($(compgen -W 'define' -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_memctl_options "${words[0]}" "$cmd" "$sub") --socket --all --help" \
            -- "$cur"))
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
        return
    fi
    case $cmd/$sub in
        plan/ | plan-submit/) _filedir csv ;;
        model/check | model/load) _filedir '@(yaml|yml)' ;;
        model/import) _filedir onnx ;;
    esac
} &&
    complete -F _memctl memctl

# fake: exit 2

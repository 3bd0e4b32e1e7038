// fake: wrong

// fake: crash

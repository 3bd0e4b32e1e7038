// fake: hang

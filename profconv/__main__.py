from profconv.cli import main

main()

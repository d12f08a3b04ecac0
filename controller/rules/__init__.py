"""The pure core of the table: cards, games, profiles, the engine and its chips."""

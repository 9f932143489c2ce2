package bot

// SetTier makes the bot hold its calls of method to perMinute a minute,
// in place of Slack's published tier: a test reaches a tier without
// making a hundred calls.
func SetTier(b *Bot, method string, perMinute int) { b.send.tiers.set(method, perMinute) }

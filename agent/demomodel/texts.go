package demomodel

// The demo's fixed texts (CommonMark). They name files and commands of
// this repository; keep them in step with README.md.

const introText = `**This is agentbridge's demo mode.** You are talking to a real Claude Code agent — a ` + "`claude`" + ` CLI process in a sandbox, one per conversation — but its model is the bridge's built-in script, not Claude. No account is needed and nothing leaves this machine.

Try:

- **run a command** — I ask to write a small file in my workspace; allow or deny it with the buttons.
- **ask me a question** — I ask you to choose, with a question card.
- **show markdown** — a longer answer, streamed slowly (press Stop mid-way if you like).
- **!help** — the chat commands, such as ` + "`!status`" + ` and ` + "`!cost`" + `.

**Use Claude:** stop the bridge (Ctrl-C), set ` + "`ANTHROPIC_API_KEY`" + ` (or ` + "`CLAUDE_CODE_OAUTH_TOKEN`" + ` from ` + "`claude setup-token`" + `) and run ` + "`make run`" + ` again — or ` + "`bridge run`" + ` without ` + "`-demo`" + `.

**Add Slack, Discord or WhatsApp:** copy a bot from ` + "`bridge example-config`" + ` into ` + "`bridge.yaml`" + ` and restart the bridge; see docs/slack.md, docs/discord.md and docs/whatsapp.md.`

const commandLead = `Read-only commands such as ` + "`ls`" + ` or ` + "`date`" + ` run without asking, but writing a file needs your permission. I'd like to create ` + "`hello.txt`" + ` in my workspace: allow or deny it with the buttons.`

const commandOutro = `That was a permission card: I waited until someone allowed to approve pressed a button, and the bridge recorded who did. **Always allow** stores a grant for this conversation (` + "`!rules`" + ` lists it); policy rules in ` + "`bridge.yaml`" + ` (` + "`agents.*.rules`" + `) allow or deny commands without asking — see docs/rules.md.`

const deniedOutro = `Denying is always safe: I am told who said no and carry on. Say **run a command** to see the card again.`

const questionOutro = `That was a question card: your choice went back to me as the tool's result, and I carried on.`

// platformSteps answers the demo question, by option label.
var platformSteps = map[string]string{
	"Slack": "To connect **Slack**: create an app from `bridges/adapters/slack/manifest.yaml` (Socket Mode, so no public URL), " +
		"export `SLACK_BOT_TOKEN` and `SLACK_APP_TOKEN`, and add a bot with `platform: slack` to `bridge.yaml` " +
		"(copy it from `bridge example-config`). Step by step: docs/slack.md.",
	"Discord": "To connect **Discord**: create an application with a bot in the Discord developer portal, enable the " +
		"Message Content intent, invite it to your server, export `DISCORD_BOT_TOKEN` and add a bot with " +
		"`platform: discord` to `bridge.yaml` (copy it from `bridge example-config`). Step by step: docs/discord.md.",
	"WhatsApp": "To connect **WhatsApp**: add a bot with `platform: whatsapp` to `bridge.yaml`, then link it to a phone " +
		"with `bridge whatsapp-link -bot NAME` (a QR code, or a pairing code with `-phone`). Details and current " +
		"status: docs/whatsapp.md.",
	"Web console only": "Then you are nearly set: add your teammates under `web.users` in `bridge.yaml` (a name, " +
		"role `user` or `admin`, and a token from the environment) and give them the address. Off `127.0.0.1`, " +
		"put the bridge behind a reverse proxy with TLS. Step by step: docs/web.md.",
}

// answerText is the reply to the demo question's answer.
func answerText(answer string) string {
	if steps, ok := platformSteps[answer]; ok {
		return "You chose **" + answer + "**. " + steps + "\n\n" + questionOutro
	}
	if answer == "" {
		return "Thanks for answering. Each platform has a page in docs/ (slack.md, discord.md, whatsapp.md). " +
			"\n\n" + questionOutro
	}
	return "You answered: " + resultLine(answer) + ". Each platform has a page in docs/ (slack.md, discord.md, " +
		"whatsapp.md).\n\n" + questionOutro
}

const markdownText = "## What the bridge does with an answer\n\n" +
	"Everything you see here was **streamed**: the CLI sends text as it comes, and the bridge edits one live " +
	"message at most once per interval, then posts the final text.\n\n" +
	"- Long answers are split at paragraphs, then lines, then words — never inside a link or `inline code`.\n" +
	"- A split inside a code block closes the fence and reopens it in the next message.\n" +
	"- Markdown is converted for each platform: Slack *mrkdwn*, Discord markdown, WhatsApp formatting, and " +
	"sanitised HTML on this page.\n\n" +
	"| platform | message limit | streaming | approvals |\n" +
	"| --- | --- | --- | --- |\n" +
	"| Slack | 4,000 characters | edits | buttons |\n" +
	"| Discord | 2,000 characters | edits | buttons |\n" +
	"| WhatsApp | ~65,000 characters | no | reply 1/2/3 or react |\n\n" +
	"```go\n" +
	"// Each conversation owns one long-lived CLI process.\n" +
	"session, err := agent.Start(ctx, opts, logger)\n" +
	"if err != nil {\n" +
	"\treturn fmt.Errorf(\"spawn agent for %s: %w\", key, err)\n" +
	"}\n" +
	"```\n\n" +
	"> Try **!cost**: it shows what this conversation cost. In demo mode the token counts are made up, so the cost is too."

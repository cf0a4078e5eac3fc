// Chat: the single-identity managed sample (the counterpart of the vendor's sample chat app).
// One account, the one the app is enrolled with; its policy applies to everything.
//
//   mamlaunch run chat --user adele@contoso.com     a prompt you type into
//   Chat --script                                   what tests and experiments drive
//
// The stories: SaveConversation.swift (asking before saving, the sharing-blocked message),
// Delegates.swift (wipe and restart), Configuration.swift (app config and policy changes).
import Foundation
import MAMSampleSupport

exit(await SampleSession.main(app: "Chat") { await Chat.interactive() })

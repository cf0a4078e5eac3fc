// Contoso Mail: the multi-identity sample. A work account (adele@contoso.com, managed) and a
// personal one live side by side; every action is decided for the account on screen.
//
//   mamlaunch run mail --user adele@contoso.com     a prompt you type into
//   Mail --script                                   what tests and experiments drive
//
// The stories, one per file: Accounts.swift (switching identity), Clipboard.swift (copy and
// paste), Attachments.swift (Open-in, imports, documents that arrive), Links.swift (web links
// and phone numbers).
import Foundation
import MAMSampleSupport

exit(await SampleSession.main(app: "Mail") { await Mail.interactive() })

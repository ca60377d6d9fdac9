//! `wireprobe client`: a protocol's reference client against a server.

use super::args::ClientArgs;
use super::{protocol_named, usage, Failure, EXIT_OK, EXIT_UNREACHABLE};
use anyhow::anyhow;
use wireprobe::reference::{self, ClientEnd, ClientOptions, ServeError};

pub(super) async fn client(args: ClientArgs) -> Result<u8, Failure> {
    let p = protocol_named(&args.protocol).map_err(usage)?;
    let client = reference::of(p)
        .and_then(|r| r.client.as_ref())
        .ok_or_else(|| usage(anyhow!("{} has no reference client yet", p.id())))?;
    if args.leave_when_answered && !client.leaves_when_answered {
        return Err(usage(anyhow!(
            "{}'s reference client cannot tell when it has been answered yet (--leave-when-answered)",
            p.id()
        )));
    }
    let dial = client.dial;
    let opts = ClientOptions {
        faults: args.faults,
        variants: args.variants,
        token: args.token,
        leave_when_answered: args.leave_when_answered,
    };
    match dial(&args.target, &opts).await {
        Ok(ClientEnd::Closed) => Ok(EXIT_OK),
        Ok(ClientEnd::TimedOut) => {
            say!(
                "wireprobe: the server at {} never closed the session",
                args.target
            );
            Ok(EXIT_OK)
        }
        Err(ServeError::Connect(why)) => Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!("{why}"),
        }),
        Err(e) => Err(usage(e.into())),
    }
}

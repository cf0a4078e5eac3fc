import ArgumentParser

/// `--tenant`: the tenant a command works with (`run`: the one its own broker serves; `explain`;
/// `matrix`), spelled and explained once.
struct TenantOption: ParsableArguments {
    @Option(help: ArgumentHelp("The tenant file or a Graph tenant export (docs/POLICIES.md; default: an experiment's own for `matrix`, else Policies/contoso/tenant.json).", valueName: "FILE"))
    var tenant: String?
}

/// `--catalog`: the apps beyond Apps/ that `explain` and `matrix` know.
struct CatalogOption: ParsableArguments {
    @Option(help: ArgumentHelp("An app catalog (docs/CATALOG.md) whose entries add to or replace the built-in one's, for apps no Apps/ folder provides (a matrix runs them live as stand-ins under manifests made from them).", valueName: "FILE"))
    var catalog: String?
}

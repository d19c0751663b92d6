/** Test support: the tenant the example apps are deployed to in tests, the HR app of organization acme. */
export const HR = { appId: 'hr', organizationId: 'acme' } as const

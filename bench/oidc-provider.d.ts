// node-oidc-provider ships no type declarations; the peer uses it untyped.
declare module 'oidc-provider';

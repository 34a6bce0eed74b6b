// Stylesheets are bundled by esbuild into console.css; importing one yields nothing.
declare module '*.css';

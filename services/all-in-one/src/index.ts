export { startSystem, developmentDefaults, type RunningSystem } from './system.js';
